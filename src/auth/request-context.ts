import { newUnitOfWork, type UnitOfWork } from "../db/unit-of-work.ts";
import { Unauthorized } from "../errors.ts";
import {
  type Authenticated,
  type Authenticator,
  anonymous,
  type Caller,
  credentialOf,
  presentsCredential,
  type Refusal,
} from "./caller.ts";
import type { Permissions } from "./permissions.ts";
import { permissionsFor } from "./policies.ts";

// What every surface knows of the request it answers, resolved once per request and only here:
// who calls (and so with what rights), and the unit of work its statements run in. The HTTP server
// resolves it before every route's handler (src/http/request-context.ts); GraphQL over WebSocket
// resolves one for each operation. Surfaces read it (`requestContext`) and resolve nothing themselves.

/** What the caller's lookup reads of a request: its id, its Authorization header and `?apikey=`. */
export interface CredentialSource {
  readonly id: string;
  readonly headers: { readonly authorization?: string | undefined };
  readonly query: unknown;
}

export interface RequestContext<Protocol = undefined> {
  /**
   * `anonymous` when the request carries no credential; undefined when the one it carries is
   * invalid (unknown, revoked, expired, forged or malformed). Read it through `asReader` or `asWriter`.
   */
  readonly caller: Caller | undefined;
  /** Why the credential the request carries is refused (`caller` undefined): "expired", … */
  readonly refused?: string;
  /** Its statements (counted, cancelled with the request), its one connection, its actor (db/unit-of-work.ts). */
  readonly unit: UnitOfWork;
  /**
   * What the surface answering the request negotiated with its client (OData: pinejs JSON or OData
   * v4): none until a surface does, which then hands on a context of its own (`withProtocol`).
   */
  readonly protocol: Protocol;
}

/** A caller as a surface acts for them: who, and their row predicates (auth/policies.ts). */
export interface Acting<C extends Caller = Caller> {
  readonly caller: C;
  readonly permissions: Permissions;
}

const resolving = new WeakMap<CredentialSource, Promise<RequestContext>>();
const resolved = new WeakMap<CredentialSource, RequestContext>();

/** A credential presented in a form the server does not take (a scheme other than Bearer, …). */
const malformed: Refusal = { refused: "is not in a form the server takes" };

/** Resolves the request's context, once per request (a second call gets the first one's). */
export function resolveRequestContext(
  request: CredentialSource,
  authenticator: Authenticator,
): Promise<RequestContext> {
  let context = resolving.get(request);
  if (!context) {
    const credential = credentialOf(request.headers, request.query);
    const caller: Promise<Caller | Refusal> = credential
      ? authenticator.authenticate(credential)
      : Promise.resolve(presentsCredential(request.headers, request.query) ? malformed : anonymous);
    context = caller.then((found) => {
      const made: RequestContext =
        "refused" in found
          ? {
              caller: undefined,
              refused: found.refused,
              unit: newUnitOfWork(request.id),
              protocol: undefined,
            }
          : {
              caller: found,
              // Whose writes the unit makes: its reads then wait for them (db/replicas.ts).
              unit: newUnitOfWork(request.id, found.kind !== "anonymous" ? found.actor : undefined),
              protocol: undefined,
            };
      resolved.set(request, made);
      return made;
    });
    resolving.set(request, context);
  }
  return context;
}

/**
 * The context resolved for the request before its handler ran. A route the server resolves no
 * caller for (the probes, /metrics, the console's files) has none: asking for it is a bug.
 */
export function requestContext(request: CredentialSource): RequestContext {
  const context = resolved.get(request);
  if (!context) throw new Error(`No request context for ${request.id}: its route takes no caller`);
  return context;
}

/** The same context, with what a surface negotiated with the client. */
export function withProtocol<P>(context: RequestContext<unknown>, protocol: P): RequestContext<P> {
  return { ...context, protocol };
}

/** The refusal of a request whose credential is refused, naming why (a subscription's end does too). */
export function credentialRefused(context: { readonly refused?: string }): Unauthorized {
  return new Unauthorized(context.refused ? `The credential ${context.refused}` : undefined);
}

/** The caller who reads: anonymous without a credential; an invalid credential is refused (Unauthorized). */
export function asReader(context: { readonly caller: Caller | undefined }): Acting {
  const { caller } = context;
  if (!caller) throw new Unauthorized();
  return { caller, permissions: permissionsFor(caller) };
}

/**
 * The caller who writes, holds keys, sends commands or speaks for a device: one with a valid
 * credential (Unauthorized otherwise, whatever their predicates would allow).
 */
export function asWriter(context: { readonly caller: Caller | undefined }): Acting<Authenticated> {
  const { caller } = context;
  if (!caller || caller.kind === "anonymous") throw new Unauthorized();
  return { caller, permissions: permissionsFor(caller) };
}
