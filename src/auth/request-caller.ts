import type { FastifyRequest } from "fastify";
import { Unauthorized } from "../errors.ts";
import {
  type Authenticated,
  type Authenticator,
  anonymous,
  type Caller,
  credentialOf,
  presentsCredential,
} from "./caller.ts";

// Who makes a request, as every surface asks it: resolved once per request and handed to the
// surfaces by src/server.ts.

const callers = new WeakMap<FastifyRequest, Promise<Caller | undefined>>();

/**
 * The caller of a request, resolved once per request: `anonymous` when it carries no credential,
 * undefined when the one it carries is invalid (unknown, revoked, expired, forged or malformed).
 */
export function callerOf(request: FastifyRequest, authenticator: Authenticator): Promise<Caller | undefined> {
  let caller = callers.get(request);
  if (!caller) {
    const credential = credentialOf(request.headers, request.query);
    if (credential) caller = authenticator.authenticate(credential);
    else caller = Promise.resolve(presentsCredential(request.headers, request.query) ? undefined : anonymous);
    callers.set(request, caller);
  }
  return caller;
}

/** A reader: the caller, anonymous without a credential; an invalid credential is a 401. */
export async function readerOf(request: FastifyRequest, authenticator: Authenticator): Promise<Caller> {
  const caller = await callerOf(request, authenticator);
  if (!caller) throw new Unauthorized();
  return caller;
}

/** A caller with a valid credential: writes, keys, the proxy and the device API need one (401 otherwise). */
export async function requireCaller(
  request: FastifyRequest,
  authenticator: Authenticator,
): Promise<Authenticated> {
  const caller = await callerOf(request, authenticator);
  if (!caller || caller.kind === "anonymous") throw new Unauthorized();
  return caller;
}
