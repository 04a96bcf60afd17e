import { SignJWT } from "jose";
import { afterAll, beforeAll, expect } from "vitest";
import type { DatabaseKind } from "../databases.ts";
import { World } from "../odata/write-world.ts";
import { startTestServer, type TestServer } from "../server.ts";

// What the credential endpoint tests (test/account/endpoints-*.test.ts) share: a server of their own on
// a fresh database per file, requests through it, and users, sessions and fleets made the way a
// client makes them.

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: unknown;
  readonly raw: string;
}

export interface CallOptions {
  readonly payload?: unknown;
  /** A bearer token; `null` sends no credential at all; absent sends the test admin's key. */
  readonly auth?: string | null;
  /** A raw Authorization header (overrides `auth`). */
  readonly authorization?: string;
  readonly remoteAddress?: string;
}

export interface TestUser {
  readonly id: number;
  readonly actor: number;
  readonly username: string;
  readonly email: string;
  readonly password: string;
}

export const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** Starts the server before the file's tests (and stops it after); the helpers act through it. */
export function credentialEndpoints(kind: DatabaseKind) {
  let server: TestServer;
  let users = 0;
  let addresses = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  async function call(method: Method, url: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (options.payload !== undefined) headers["content-type"] = "application/json";
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (options.auth === null) headers.authorization = "";
    else if (options.auth !== undefined) headers.authorization = `Bearer ${options.auth}`;
    const response = await server.app.inject({
      method,
      url,
      headers,
      ...(options.payload === undefined ? {} : { payload: JSON.stringify(options.payload) }),
      ...(options.remoteAddress === undefined ? {} : { remoteAddress: options.remoteAddress }),
    });
    let body: unknown = response.body;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  }

  /** A client address no other test uses, so the per-address throttle never crosses tests. */
  const freshAddress = () => {
    addresses += 1;
    return `10.20.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
  };

  function login(username: string, password: string, remoteAddress = freshAddress()): Promise<Reply> {
    return call("POST", "/login_", { payload: { username, password }, auth: null, remoteAddress });
  }

  async function sessionOf(user: TestUser): Promise<string> {
    const reply = await login(user.username, user.password);
    expect(reply.status, reply.raw).toBe(200);
    return reply.raw;
  }

  async function createUser(label: string): Promise<TestUser> {
    users += 1;
    const username = `${label}-${users}`;
    const email = `${username}@example.com`;
    const password = `secret-${username}-pw`;
    const reply = await call("POST", "/v6/user", { payload: { username, email, password } });
    expect(reply.status, reply.raw).toBe(201);
    const id = (reply.body as { id: number }).id;
    const row = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id } });
    return { id, actor: row.actor, username, email, password };
  }

  async function jwtSecret(): Promise<Uint8Array> {
    const setting = await server.test.db.prisma.setting.findUniqueOrThrow({ where: { name: "jwt_secret" } });
    return new TextEncoder().encode(setting.value);
  }

  /** A session token made by hand, as the server would have made it at `authTime`. */
  async function signSession(
    user: TestUser,
    options: { authTime?: number; expires?: number; secret?: Uint8Array; jwtSecretClaim?: string } = {},
  ): Promise<string> {
    const row = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      id: user.id,
      jwt_secret: options.jwtSecretClaim ?? row.jwt_secret,
      authTime: options.authTime ?? now,
    })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(Math.min(now, options.authTime ?? now))
      .setExpirationTime(options.expires ?? now + 3600)
      .sign(options.secret ?? (await jwtSecret()));
  }

  /** A fleet (and a device in it) in the user's personal organization. */
  async function fleetOf(user: TestUser) {
    const world = new World(server.test.db, `auth${kind}`);
    const organization = await server.test.db.prisma.organization.findFirstOrThrow({
      where: { handle: user.username },
    });
    const fleet = await world.fleet(organization, await world.deviceType("amd64"));
    const device = await world.device(fleet);
    return { fleet, device };
  }

  async function keyIdByName(name: string): Promise<number> {
    const key = await server.test.db.prisma.apiKey.findFirstOrThrow({ where: { name } });
    return key.id;
  }

  return {
    /** The server's database, once it started. */
    db: () => server.test.db,
    call,
    freshAddress,
    login,
    sessionOf,
    createUser,
    jwtSecret,
    signSession,
    fleetOf,
    keyIdByName,
  };
}
