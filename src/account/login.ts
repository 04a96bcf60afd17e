import type { FastifyInstance } from "fastify";
import { hashPassword, verifyPassword } from "../auth/passwords.ts";
import { asWriter, requestContext } from "../auth/request-context.ts";
import { issueToken } from "../auth/tokens.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, Unauthorized } from "../errors.ts";
import type { AccountDeps } from "./deps.ts";
import { bodyObject } from "./key-request.ts";

const unknownUserHash = hashPassword("no user has this password");

interface Account {
  readonly id: number;
  readonly username: string;
  readonly password: string;
  readonly jwt_secret: string;
}

/**
 * The account a login names: by e-mail when it holds an `@` (which no username does), else by
 * username, both compared without case as balena does (each is unique without case). An e-mail
 * shared by several accounts (impossible since issue 30's unique index) names none of them.
 */
async function account(db: Executor, login: string): Promise<Account | undefined> {
  const byEmail = login.includes("@");
  const users = await db.query<Account>({
    text: byEmail
      ? `SELECT "id", "username", "password", "jwt_secret" FROM "user" WHERE lower("email") = lower($1::text) LIMIT 2`
      : `SELECT "id", "username", "password", "jwt_secret" FROM "user" WHERE lower("username") = lower($1::text) LIMIT 2`,
    values: [login],
  });
  return users.length === 1 ? users[0] : undefined;
}

/** The user a username (or e-mail) and password name, counted by the login throttle either way. */
async function loggedIn(deps: AccountDeps, body: unknown, address: string): Promise<Account> {
  const { username, password } = bodyObject(body);
  if (typeof username !== "string" || typeof password !== "string")
    throw new BadRequest("username and password are required");
  const holder = await account(deps.db, username);
  // Failures count against the account, whether it was named by username or by e-mail; a login
  // that names no account counts under what was typed.
  const attempt = await deps.throttle.begin(holder?.username ?? username.toLowerCase(), address);
  let user: Account | undefined;
  try {
    // An unknown login costs the same scrypt work as a wrong password, so timing reveals nothing.
    const valid = await verifyPassword(password, holder?.password ?? (await unknownUserHash));
    if (holder && valid) user = holder;
  } finally {
    // An error on the way counts as a failure: the throttle must not be a way around itself.
    if (user) await attempt.succeeded();
    else await attempt.failed();
  }
  if (!user) throw new Unauthorized();
  return user;
}

/** Session tokens: `POST /login_` issues one, `/user/v1/refresh-token` a new one for the same login. */
export function loginRoutes(app: FastifyInstance, deps: AccountDeps): void {
  const { authenticator } = deps;

  app.post("/login_", async (request, reply) => {
    const user = await loggedIn(deps, request.body, request.ip);
    const token = await issueToken(authenticator.signingSecret, {
      id: user.id,
      jwt_secret: user.jwt_secret,
      authTime: Math.floor(Date.now() / 1000),
    });
    return reply.type("text/plain").send(token);
  });

  app.get("/user/v1/refresh-token", async (request, reply) => {
    const { caller } = asWriter(requestContext(request));
    if (caller.kind !== "user" || !caller.session) throw new Unauthorized();
    return reply.type("text/plain").send(await issueToken(authenticator.signingSecret, caller.session));
  });
}
