import type { IncomingMessage } from "node:http";
import { CloseCode } from "graphql-ws";
import { credentialOf } from "../../auth/caller.ts";

// Which credential a graphql-ws connection acts with (README "Over WebSocket"). A connection may
// present one in three places: its `connectionParams` (`Authorization`, or `authorization`), the
// upgrade request's `Authorization` header, and the upgrade's `?apikey=`. The rules:
// 1. Each one presented must be valid: an invalid one anywhere (unknown, revoked, expired, a scheme
//    other than Bearer) closes the connection with 4401, even when another place holds a valid one.
// 2. All presented must be the same credential: two different ones close it with 4403. "The same"
//    is the same token text (after `Bearer `): two credentials of one user (a session token and an
//    API key) are two, since they may carry different rights and end at different times.
// 3. None presented: the connection reads as a guest.
// A connection never acts with the better of two credentials, nor with the one a client happened to
// put in one place rather than the other.

/** A credential as the connection presented it: its token, or undefined when it has none readable. */
interface Presented {
  readonly token: string | undefined;
}

// As over HTTP (auth/caller.ts presentsCredential): an empty value presents nothing.
const blank = (value: unknown) =>
  value === undefined || value === null || (typeof value === "string" && value.trim() === "");

/** Every credential the connection presented, wherever it did. */
function presented(
  params: Readonly<Record<string, unknown>> | undefined,
  upgrade: IncomingMessage,
): Presented[] {
  const authorizations = [params?.Authorization, params?.authorization, upgrade.headers.authorization];
  const found: Presented[] = authorizations
    .filter((value) => !blank(value))
    // A non-string, or a scheme other than Bearer, is meant as a credential but names none.
    .map((value) => ({
      token: typeof value === "string" ? credentialOf({ authorization: value }, {}) : undefined,
    }));
  const apikey = new URL(upgrade.url ?? "/", "http://localhost").searchParams.get("apikey");
  if (!blank(apikey)) found.push({ token: apikey ?? undefined });
  return found;
}

/** What a connection acts with: a token (undefined: a guest), or the close code and reason it gets. */
export type ConnectionCredential =
  | { readonly token: string | undefined }
  | { readonly refused: { readonly code: number; readonly reason: string } };

const INVALID = {
  code: CloseCode.Unauthorized,
  reason: "Unauthorized: the credential is invalid, revoked or expired",
};
const TWO = {
  code: CloseCode.Forbidden,
  reason: "Forbidden: the connection presented two different credentials",
};

/**
 * The connection's credential by the rules above. `isValid` answers whether a token names a caller
 * (the same lookup a request makes); every distinct token presented is looked up.
 */
export async function connectionCredential(
  params: Readonly<Record<string, unknown>> | undefined,
  upgrade: IncomingMessage,
  isValid: (token: string) => Promise<boolean>,
): Promise<ConnectionCredential> {
  const found = presented(params, upgrade);
  const tokens = new Set(found.map((each) => each.token));
  for (const token of tokens) {
    if (token === undefined || !(await isValid(token))) return { refused: INVALID };
  }
  if (tokens.size > 1) return { refused: TWO };
  return { token: found[0]?.token };
}
