import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Database } from "../db/database.ts";
import { BadRequest, FleetgateError, NotFound, Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { createApiKey } from "./api-keys.ts";
import {
  type Authenticated,
  type Authenticator,
  anonymous,
  type Caller,
  credentialOf,
  presentsCredential,
} from "./caller.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import type { LoginThrottle } from "./throttle.ts";
import { issueToken } from "./tokens.ts";
import { writableRowActor } from "./writable-row.ts";

export interface AuthDeps {
  readonly db: Database;
  readonly model: Model;
  readonly authenticator: Authenticator;
  /** Failed logins per (username, address), per address and per username. */
  readonly throttle: LoginThrottle;
}

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

const unknownUserHash = hashPassword("no user has this password");

interface Account {
  readonly id: number;
  readonly username: string;
  readonly password: string;
  readonly jwt_secret: string;
}

// A full user key can do anything the user can: making one needs a password given in the last 20 minutes.
const freshLoginSeconds = 20 * 60;

function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new BadRequest("The body must be a JSON object");
  return body as Record<string, unknown>;
}

function optionalText(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new BadRequest(`'${name}' must be a string`);
  return value;
}

function expiryDate(body: Record<string, unknown>): string | null {
  const value = optionalText(body, "expiryDate");
  if (value === null) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new BadRequest("'expiryDate' must be an ISO 8601 date-time");
  return date.toISOString();
}

export function authRoutes(app: FastifyInstance, deps: AuthDeps): void {
  const { db, authenticator, throttle } = deps;

  /** The actor of a fleet or device the caller may change (they may then hold a key for it). */
  async function writableActor(
    caller: Authenticated,
    table: "application" | "device",
    id: unknown,
  ): Promise<number> {
    if (typeof id !== "number" || !Number.isSafeInteger(id))
      throw new BadRequest(`'${table}' id must be an integer`);
    try {
      return await writableRowActor(db, deps.model, caller, table, id);
    } catch (error) {
      // open-balena-api (src/features/api-keys/lib.ts) answers a fleet or device the caller cannot
      // see, or that does not exist, with this 500, and balena-sdk turns exactly it into "Application
      // not found" / "Device not found" (`isNoApplicationForKeyResponse`, `isNoDeviceForKeyResponse`).
      if (error instanceof NotFound) {
        throw new FleetgateError(`No ${table} found to associate with the api key`, 500, "NOT_FOUND");
      }
      throw error;
    }
  }

  /**
   * The account a login names: by e-mail when it holds an `@` (which no username does), else by
   * username, both compared without case as balena does (each is unique without case). An e-mail
   * shared by several accounts (impossible since issue 30's unique index) names none of them.
   */
  async function account(login: string): Promise<Account | undefined> {
    const byEmail = login.includes("@");
    const users = await db.query<Account>({
      text: byEmail
        ? `SELECT "id", "username", "password", "jwt_secret" FROM "user" WHERE lower("email") = lower($1::text) LIMIT 2`
        : `SELECT "id", "username", "password", "jwt_secret" FROM "user" WHERE lower("username") = lower($1::text) LIMIT 2`,
      values: [login],
    });
    return users.length === 1 ? users[0] : undefined;
  }

  app.post("/login_", async (request, reply) => {
    const body = bodyObject(request.body);
    const { username, password } = body;
    if (typeof username !== "string" || typeof password !== "string")
      throw new BadRequest("username and password are required");
    const holder = await account(username);
    // Failures count against the account, whether it was named by username or by e-mail; a login
    // that names no account counts under what was typed.
    const attempt = throttle.begin(holder?.username ?? username.toLowerCase(), request.ip);
    let user: Account | undefined;
    try {
      // An unknown login costs the same scrypt work as a wrong password, so timing reveals nothing.
      const valid = await verifyPassword(password, holder?.password ?? (await unknownUserHash));
      if (holder && valid) user = holder;
    } finally {
      // An error on the way counts as a failure: the throttle must not be a way around itself.
      if (user) attempt.succeeded();
      else attempt.failed();
    }
    if (!user) throw new Unauthorized();
    const token = await issueToken(authenticator.signingSecret, {
      id: user.id,
      jwt_secret: user.jwt_secret,
      authTime: Math.floor(Date.now() / 1000),
    });
    return reply.type("text/plain").send(token);
  });

  app.get("/user/v1/whoami", async (request) => {
    const caller = await requireCaller(request, authenticator);
    if (caller.kind !== "user") throw new Unauthorized();
    return { id: caller.userId, username: caller.username, email: caller.email };
  });

  app.get("/actor/v1/whoami", async (request) => {
    const caller = await requireCaller(request, authenticator);
    switch (caller.kind) {
      case "user":
        return {
          id: caller.actor,
          actorType: "user",
          actorTypeId: caller.userId,
          username: caller.username,
          email: caller.email,
        };
      case "application":
        return {
          id: caller.actor,
          actorType: "application",
          actorTypeId: caller.applicationId,
          slug: caller.slug,
        };
      case "device":
        return { id: caller.actor, actorType: "device", actorTypeId: caller.deviceId, uuid: caller.uuid };
    }
  });

  app.get("/user/v1/refresh-token", async (request, reply) => {
    const caller = await requireCaller(request, authenticator);
    if (caller.kind !== "user" || !caller.session) throw new Unauthorized();
    return reply.type("text/plain").send(await issueToken(authenticator.signingSecret, caller.session));
  });

  const sendKey = (key: string) => JSON.stringify(key);

  /** A key with the user's full rights: a session token from a login less than 20 minutes old. */
  async function freshUser(request: FastifyRequest): Promise<Extract<Authenticated, { kind: "user" }>> {
    const caller = await requireCaller(request, authenticator);
    if (caller.kind !== "user") throw new Unauthorized();
    if (!caller.session || Date.now() / 1000 - caller.session.authTime > freshLoginSeconds) {
      throw new Unauthorized("Fresh authentication token required");
    }
    return caller;
  }

  app.post("/api-key/user/full", async (request, reply) => {
    const caller = await freshUser(request);
    const body = bodyObject(request.body);
    const name = optionalText(body, "name");
    if (!name) throw new BadRequest("'name' is required");
    const key = await createApiKey(db, {
      actor: caller.actor,
      name,
      description: optionalText(body, "description"),
      expiryDate: expiryDate(body),
    });
    return reply.type("application/json").send(sendKey(key));
  });

  // balena-sdk 19's application.generateApiKey (deprecated there). open-balena-api
  // (src/features/api-keys/index.ts, createUserApiKey) answers it with a key of the calling user,
  // under the same fresh-login rule as a full key; the fleet in the path plays no part (the SDK
  // reads the fleet first, so an unknown one fails there). Named as the request names it, else not.
  app.post<{ Params: { id: string } }>("/application/:id/generate-api-key", async (request, reply) => {
    const caller = await freshUser(request);
    const body = bodyObject(request.body);
    const key = await createApiKey(db, {
      actor: caller.actor,
      name: optionalText(body, "name"),
      description: optionalText(body, "description"),
      expiryDate: expiryDate(body),
    });
    return reply.type("application/json").send(sendKey(key));
  });

  for (const version of ["v1", "v2"] as const) {
    app.post(`/api-key/${version}`, async (request, reply) => {
      const caller = await requireCaller(request, authenticator);
      const body = bodyObject(request.body);
      if (version === "v2" && !("expiryDate" in body))
        throw new BadRequest("'expiryDate' is required (null for a key that does not expire)");
      if (
        body.roles !== undefined &&
        !(Array.isArray(body.roles) && body.roles.every((role) => typeof role === "string"))
      ) {
        throw new BadRequest("'roles' must be an array of strings");
      }
      let actor: number;
      switch (body.actorType) {
        case "user":
          if (caller.kind !== "user" || (body.actorTypeId !== caller.userId && !caller.isAdmin))
            throw new Unauthorized();
          if (body.actorTypeId !== caller.userId) {
            const [user] = await db.query<{ actor: number }>({
              text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
              values: [body.actorTypeId],
            });
            if (!user) throw new NotFound(`No user with id ${String(body.actorTypeId)}`);
            actor = user.actor;
          } else actor = caller.actor;
          break;
        case "application":
          actor = await writableActor(caller, "application", body.actorTypeId);
          break;
        case "device":
          actor = await writableActor(caller, "device", body.actorTypeId);
          break;
        default:
          throw new BadRequest("'actorType' must be user, application or device");
      }
      const key = await createApiKey(db, {
        actor,
        name: optionalText(body, "name"),
        description: optionalText(body, "description"),
        expiryDate: expiryDate(body),
      });
      return reply.type("application/json").send(sendKey(key));
    });
  }

  const keyFor =
    (table: "application" | "device", name: string | null) =>
    async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const caller = await requireCaller(request, authenticator);
      const body = bodyObject(request.body);
      const actor = await writableActor(caller, table, Number(request.params.id));
      return createApiKey(db, {
        actor,
        name: optionalText(body, "name") ?? name,
        description: optionalText(body, "description"),
        expiryDate: expiryDate(body),
      });
    };
  const provisioning = keyFor("application", "provisioning key");
  // open-balena-api names a device's key only with the name the request gives (src/features/api-keys/routes.ts).
  const deviceKey = keyFor("device", null);
  app.post<{ Params: { id: string } }>("/api-key/application/:id/provisioning", async (request, reply) =>
    reply.type("application/json").send(sendKey(await provisioning(request))),
  );
  app.post<{ Params: { id: string } }>("/api-key/device/:id/device-key", async (request, reply) =>
    reply.type("application/json").send(sendKey(await deviceKey(request))),
  );
}
