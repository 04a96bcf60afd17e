import { createHash } from "node:crypto";
import type { Executor } from "../db/database.ts";
import { hashKey } from "./api-keys.ts";
import { looksLikeJwt, type SessionClaims, verifyToken } from "./tokens.ts";

/** Who is calling, as resolved from their credential; `anonymous` when the request carries none. */
export type Caller =
  | {
      readonly kind: "user";
      readonly actor: number;
      readonly userId: number;
      readonly username: string;
      readonly email: string;
      readonly isAdmin: boolean;
      /** Set when the credential is a session token (not an API key). */
      readonly session: SessionClaims | undefined;
    }
  | {
      readonly kind: "device";
      readonly actor: number;
      readonly deviceId: number;
      readonly uuid: string;
      readonly applicationId: number;
    }
  | {
      readonly kind: "application";
      readonly actor: number;
      readonly applicationId: number;
      readonly slug: string;
    }
  // No credential at all (an invalid one is refused instead): reads what is public, writes nothing.
  | { readonly kind: "anonymous" };

/** A caller whose credential was checked: the only kind that may write or act on devices. */
export type Authenticated = Exclude<Caller, { kind: "anonymous" }>;

export const anonymous: Caller = { kind: "anonymous" };

interface KeyRow {
  actor: number;
  user_id: number | null;
  username: string | null;
  email: string | null;
  is_admin: boolean | null;
  application_id: number | null;
  slug: string | null;
  device_id: number | null;
  uuid: string | null;
  device_application: number | null;
}

// A credential resolves to the same caller for a few seconds without asking the database again,
// so a read stays one statement. Writes to users and keys clear it (see `forget`).
const ttlMs = 5_000;
const maxEntries = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, { caller: Authenticated; expires: number }>();

  constructor(
    private readonly db: Executor,
    private readonly secret: Uint8Array,
  ) {}

  get signingSecret(): Uint8Array {
    return this.secret;
  }

  /** Forgets every cached caller: a password, key or user changed. */
  forget(): void {
    this.cache.clear();
  }

  async authenticate(credential: string): Promise<Authenticated | undefined> {
    const cacheKey = createHash("sha256").update(credential).digest("base64url");
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expires > Date.now()) return cached.caller;
    const caller = looksLikeJwt(credential)
      ? await this.fromToken(credential)
      : await this.fromApiKey(credential);
    if (caller) {
      if (this.cache.size >= maxEntries) this.cache.clear();
      this.cache.set(cacheKey, { caller, expires: Date.now() + ttlMs });
    }
    return caller;
  }

  private async fromToken(token: string): Promise<Authenticated | undefined> {
    const claims = await verifyToken(this.secret, token);
    if (!claims) return undefined;
    const [user] = await this.db.query<{
      actor: number;
      username: string;
      email: string;
      is_admin: boolean;
      jwt_secret: string;
    }>({
      text: `SELECT "actor", "username", "email", "is_admin", "jwt_secret" FROM "user" WHERE "id" = $1::int4`,
      values: [claims.id],
    });
    if (!user || user.jwt_secret !== claims.jwt_secret) return undefined;
    return {
      kind: "user",
      actor: user.actor,
      userId: claims.id,
      username: user.username,
      email: user.email,
      isAdmin: user.is_admin,
      session: claims,
    };
  }

  private async fromApiKey(key: string): Promise<Authenticated | undefined> {
    const [row] = await this.db.query<KeyRow>({
      text: `SELECT k."is_of__actor" AS actor,
                    u."id" AS user_id, u."username", u."email", u."is_admin",
                    a."id" AS application_id, a."slug",
                    d."id" AS device_id, d."uuid", d."belongs_to__application" AS device_application
               FROM "api_key" k
               LEFT JOIN "user" u ON u."actor" = k."is_of__actor"
               LEFT JOIN "application" a ON a."actor" = k."is_of__actor"
               LEFT JOIN "device" d ON d."actor" = k."is_of__actor"
              WHERE k."key_hash" = $1::text AND (k."expiry_date" IS NULL OR k."expiry_date" > now())`,
      values: [hashKey(key)],
    });
    if (!row) return undefined;
    if (row.user_id !== null) {
      return {
        kind: "user",
        actor: row.actor,
        userId: row.user_id,
        username: row.username ?? "",
        email: row.email ?? "",
        isAdmin: row.is_admin === true,
        session: undefined,
      };
    }
    if (row.device_id !== null && row.device_application !== null) {
      return {
        kind: "device",
        actor: row.actor,
        deviceId: row.device_id,
        uuid: row.uuid ?? "",
        applicationId: row.device_application,
      };
    }
    if (row.application_id !== null)
      return {
        kind: "application",
        actor: row.actor,
        applicationId: row.application_id,
        slug: row.slug ?? "",
      };
    return undefined;
  }
}

/** `Authorization: Bearer <jwt or key>`, else `?apikey=`. */
export function credentialOf(
  headers: { authorization?: string | undefined },
  query: unknown,
): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1];
  if (bearer) return bearer;
  const apikey = (query as { apikey?: unknown } | undefined)?.apikey;
  return typeof apikey === "string" && apikey !== "" ? apikey : undefined;
}

/**
 * Whether the request carries something meant as a credential: a non-empty `Authorization` header
 * (of any scheme) or `?apikey=`. One that does not resolve to a caller is a 401, never anonymous.
 */
export function presentsCredential(headers: { authorization?: string | undefined }, query: unknown): boolean {
  if ((headers.authorization ?? "").trim() !== "") return true;
  const apikey = (query as { apikey?: unknown } | undefined)?.apikey;
  return apikey !== undefined && apikey !== "";
}
