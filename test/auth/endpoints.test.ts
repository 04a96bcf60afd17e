import { decodeJwt, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { World } from "../support/write-world.ts";

// The credential endpoints through the real server: users and organizations made over OData, /login_,
// session tokens (JWTs), named API keys, whoami, expiry and revocation (throttling: login-throttle.test.ts).

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: unknown;
  readonly raw: string;
}

interface CallOptions {
  readonly payload?: unknown;
  /** A bearer token; `null` sends no credential at all; absent sends the test admin's key. */
  readonly auth?: string | null;
  /** A raw Authorization header (overrides `auth`). */
  readonly authorization?: string;
  readonly remoteAddress?: string;
}

interface TestUser {
  readonly id: number;
  readonly actor: number;
  readonly username: string;
  readonly email: string;
  readonly password: string;
}

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

describe.each(databaseKinds)("credential endpoints on %s", (kind) => {
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

  // --- without a credential ---

  describe("without a credential", () => {
    it("answers /ping and /login_", async () => {
      const ping = await call("GET", "/ping", { auth: null });
      expect(ping.status).toBe(200);
      expect(ping.raw).toBe("OK");
      const user = await createUser("anon-login");
      const reply = await login(user.username, user.password);
      expect(reply.status, reply.raw).toBe(200);
    });

    const sample: [Method, string, unknown?][] = [
      ["GET", "/v6/device"],
      ["GET", "/v6/user"],
      ["GET", "/v6/api_key"],
      ["GET", "/v6/application(1)"],
      ["GET", "/v6/organization?$select=id"],
      ["GET", "/v6/device/$count"],
      ["POST", "/v6/organization", { name: "anon", handle: "anon-org" }],
      ["POST", "/v6/user", { username: "anon-user", email: "a@example.com", password: "anon-password" }],
      ["PATCH", "/v6/device(1)", { note: "x" }],
      ["PATCH", "/v6/user(1)", { password: "changed-password" }],
      ["PUT", "/v6/organization(1)", { name: "x", handle: "x" }],
      ["DELETE", "/v6/api_key(1)"],
      ["DELETE", "/v6/organization?$filter=id gt 0"],
      ["GET", "/user/v1/whoami"],
      ["GET", "/actor/v1/whoami"],
      ["GET", "/user/v1/refresh-token"],
      ["POST", "/api-key/user/full", { name: "k" }],
      ["POST", "/api-key/v1", { actorType: "user", actorTypeId: 1, roles: [] }],
      ["POST", "/api-key/v2", { actorType: "user", actorTypeId: 1, roles: [], expiryDate: null }],
      ["POST", "/api-key/application/1/provisioning", {}],
      ["POST", "/api-key/device/1/device-key", {}],
    ];

    // Issue 15: without a credential, OData reads answer with the public rows (a public fleet and its
    // public releases; none of the rows these name); everything else needs one. Issue 30: users and
    // API keys, on which balena's guest has no permission at all, are a 401 too.
    const anonymousReads = sample.filter(
      ([method, url]) => method === "GET" && url.startsWith("/v6/") && !/^\/v6\/(user|api_key)\b/.test(url),
    );
    it.each(sample.filter((entry) => !anonymousReads.includes(entry)))(
      "%s %s is 401 without a credential",
      async (method, url, payload) => {
        const reply = await call(method, url, { auth: null, payload });
        expect(reply.status, reply.raw).toBe(401);
      },
    );

    it.each(anonymousReads.filter(([, url]) => !url.startsWith("/v6/application")))(
      "%s %s reads nothing without a credential",
      async (method, url) => {
        const reply = await call(method, url, { auth: null });
        expect(reply.status, reply.raw).toBe(200);
        expect(reply.body).toEqual({ d: url.endsWith("$count") ? 0 : [] });
      },
    );

    it.each(sample)("%s %s is 401 with an invalid credential", async (method, url, payload) => {
      const bogusJwt = await new SignJWT({ id: 1_000_000, jwt_secret: "test", authTime: 0 })
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode("not-the-secret-of-this-server-0123456789"));
      for (const options of [
        { auth: "not-a-key" },
        { auth: bogusJwt },
        { auth: "a.b.c" },
        { authorization: "Basic dGVzdC1hZG1pbjp0ZXN0LWFkbWluLXBhc3N3b3Jk" },
        { authorization: "Bearer" },
        { auth: null, apikey: "not-a-key" },
      ] as (CallOptions & { apikey?: string })[]) {
        const target = options.apikey
          ? `${url}${url.includes("?") ? "&" : "?"}apikey=${options.apikey}`
          : url;
        const reply = await call(method, target, { ...options, payload });
        expect(reply.status, `${JSON.stringify(options)}: ${reply.raw}`).toBe(401);
      }
    });

    it("GET /v6/$metadata needs no credential (the model is no secret), an invalid one is 401", async () => {
      const reply = await call("GET", "/v6/$metadata", { auth: null });
      expect(reply.status, reply.raw.slice(0, 200)).toBe(200);
      expect((await call("GET", "/v6/$metadata", { auth: "not-a-key" })).status).toBe(401);
    });

    it("an invalid credential changes nothing", async () => {
      const before = await server.test.db.prisma.organization.count();
      await call("POST", "/v6/organization", { auth: "nope", payload: { name: "x", handle: "nope-org" } });
      expect(await server.test.db.prisma.organization.count()).toBe(before);
    });
  });

  // --- users and organizations through OData ---

  describe("users and organizations", () => {
    it("POST /v6/user stores a scrypt hash and makes a personal organization the user owns", async () => {
      const user = await createUser("alice");
      const row = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
      expect(row.username).toBe(user.username);
      expect(row.email).toBe(user.email);
      expect(row.password).not.toContain(user.password);
      expect(row.password).toMatch(/^scrypt\$/);
      expect(row.is_admin).toBe(false);

      const organization = await server.test.db.prisma.organization.findFirstOrThrow({
        where: { handle: user.username },
      });
      expect(organization.name).toBe(user.username);
      const memberships = await server.test.db.prisma.organizationMembership.findMany({
        where: { user: user.id },
        include: { Role: true },
      });
      expect(memberships.map((m) => [m.is_member_of__organization, m.Role.name])).toEqual([
        [organization.id, "administrator"],
      ]);

      // Two users with the same password get different hashes (salted).
      const twin = await createUser("alice");
      const twinRow = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id: twin.id } });
      expect(twinRow.password).not.toBe(row.password);
    });

    it("the password is never read, selected, filtered or ordered by", async () => {
      const user = await createUser("hidden");
      const reply = await call("GET", `/v6/user(${user.id})`);
      expect(reply.status, reply.raw).toBe(200);
      const [entity] = (reply.body as { d: Record<string, unknown>[] }).d;
      expect(entity).toMatchObject({ id: user.id, username: user.username, email: user.email });
      expect(entity).not.toHaveProperty("password");
      expect(entity).not.toHaveProperty("jwt_secret");
      expect(reply.raw).not.toContain("scrypt");

      for (const url of [
        "/v6/user?$select=password",
        "/v6/user?$select=id,password",
        "/v6/user?$filter=password eq 'x'",
        `/v6/user?$filter=startswith(password,'scrypt')`,
        "/v6/user?$orderby=password",
        "/v6/user?$orderby=password desc",
        "/v6/organization_membership?$expand=user($select=password)",
        "/v6/organization_membership?$filter=user/password eq 'x'",
        "/v6/user?$select=jwt_secret",
        "/v6/user?$filter=jwt_secret eq 'x'",
      ]) {
        const refused = await call("GET", url);
        expect(refused.status, `${url}: ${refused.raw}`).toBe(400);
        expect(refused.raw, url).toContain("Unknown field");
      }

      // Not for the user themself either.
      const token = await sessionOf(user);
      const own = await call("GET", "/v6/user?$select=password", { auth: token });
      expect(own.status, own.raw).toBe(400);
      expect(own.raw).toContain("Unknown field");
    });

    it("an admin updating an organization does not become its owner", async () => {
      const world = new World(server.test.db, `orgupdate${kind}`);
      const organization = await world.organization();
      for (const [method, payload] of [
        ["PUT", { name: "Renamed", handle: `${organization.handle}-put` }],
        ["PATCH", { name: "Renamed again", handle: `${organization.handle}-patch` }],
      ] as const) {
        const reply = await call(method, `/v6/organization(${organization.id})`, { payload });
        expect(reply.status, `${method}: ${reply.raw}`).toBe(200);
      }
      const memberships = await server.test.db.prisma.organizationMembership.findMany({
        where: { is_member_of__organization: organization.id },
      });
      expect(memberships.map((m) => [m.user, m.organization_membership_role])).toEqual([]);
    });

    it("$metadata does not describe the password, jwt_secret or key_hash", async () => {
      const reply = await call("GET", "/v6/$metadata");
      expect(reply.status).toBe(200);
      expect(reply.raw).toContain('Name="username"');
      for (const name of ["password", "jwt_secret", "key_hash"]) expect(reply.raw).not.toContain(`"${name}"`);
    });

    it("refuses a short password and a bad username", async () => {
      const short = await call("POST", "/v6/user", {
        payload: { username: "shorty", email: "s@example.com", password: "short" },
      });
      expect(short.status, short.raw).toBe(400);
      expect(short.raw).toContain("password");
      const bad = await call("POST", "/v6/user", {
        payload: { username: "no spaces", email: "n@example.com", password: "long-enough-pw" },
      });
      expect(bad.status, bad.raw).toBe(400);
      expect(
        await server.test.db.prisma.user.count({ where: { username: { in: ["shorty", "no spaces"] } } }),
      ).toBe(0);
    });

    it("POST /v6/organization and /v6/organization_membership", async () => {
      const owner = await createUser("orgowner");
      const member = await createUser("orgmember");
      const created = await call("POST", "/v6/organization", {
        payload: { name: "Acme Robotics", handle: `acme-${kind}` },
      });
      expect(created.status, created.raw).toBe(201);
      const organization = created.body as { id: number; name: string; handle: string };
      expect(organization).toMatchObject({ name: "Acme Robotics", handle: `acme-${kind}` });

      for (const [user, role] of [
        [owner, "owner"],
        [member, "member"],
      ] as const) {
        const membership = await call("POST", "/v6/organization_membership", {
          payload: { user: user.id, is_member_of__organization: organization.id, role },
        });
        expect(membership.status, membership.raw).toBe(201);
      }
      const rows = await server.test.db.prisma.organizationMembership.findMany({
        where: { is_member_of__organization: organization.id },
        orderBy: { user: "asc" },
        include: { Role: true },
      });
      // Whoever creates an organization owns it (balena's administrator): here the test admin (id 1000000).
      expect(rows.map((row) => [row.user, row.Role.name])).toEqual([
        [owner.id, "administrator"],
        [member.id, "member"],
        [1_000_000, "administrator"],
      ]);
      const badRole = await call("POST", "/v6/organization_membership", {
        payload: {
          user: (await createUser("orgbadrole")).id,
          is_member_of__organization: organization.id,
          role: "king",
        },
      });
      expect(badRole.status, badRole.raw).toBe(400);

      // The member sees the organization; the owner, through their own session, too.
      const memberToken = await sessionOf(member);
      const seen = await call("GET", `/v6/organization(${organization.id})?$select=handle`, {
        auth: memberToken,
      });
      expect(seen.status, seen.raw).toBe(200);
      expect((seen.body as { d: unknown[] }).d).toEqual([{ handle: `acme-${kind}` }]);
    });
  });

  // --- /login_ and session tokens ---

  describe("/login_", () => {
    it("answers a JWT as text/plain that identifies the user", async () => {
      const user = await createUser("login");
      const reply = await login(user.username, user.password);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["content-type"]).toMatch(/^text\/plain/);
      expect(reply.raw).toMatch(JWT);
      const claims = decodeJwt(reply.raw);
      expect(claims.id).toBe(user.id);
      expect(Math.abs((claims.authTime as number) - Date.now() / 1000)).toBeLessThan(60);

      const whoami = await call("GET", "/user/v1/whoami", { auth: reply.raw });
      expect(whoami.status, whoami.raw).toBe(200);
      expect(whoami.body).toEqual({ id: user.id, username: user.username, email: user.email });
    });

    it("refuses wrong credentials with 401", async () => {
      const user = await createUser("wrong");
      for (const [username, password] of [
        [user.username, "not-the-password"],
        [user.username, `${user.password} `],
        ["no-such-user-anywhere", user.password],
        [user.username, ""],
      ] as const) {
        const reply = await login(username, password);
        expect(reply.status, `${username}/${password}: ${reply.raw}`).toBe(401);
        expect(reply.raw).not.toMatch(JWT);
      }
    });

    it("refuses a body without username and password", async () => {
      for (const payload of [{}, { username: "x" }, { password: "y" }, { username: 1, password: 2 }]) {
        const reply = await call("POST", "/login_", { payload, auth: null, remoteAddress: freshAddress() });
        expect(reply.status, `${JSON.stringify(payload)}: ${reply.raw}`).toBe(400);
      }
    });

    it("GET /user/v1/refresh-token answers a fresh JWT of the same session", async () => {
      const user = await createUser("refresh");
      const authTime = Math.floor(Date.now() / 1000) - 120;
      const token = await signSession(user, { authTime });
      const reply = await call("GET", "/user/v1/refresh-token", { auth: token });
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["content-type"]).toMatch(/^text\/plain/);
      expect(reply.raw).toMatch(JWT);
      expect(reply.raw).not.toBe(token);
      const claims = decodeJwt(reply.raw);
      expect(claims.id).toBe(user.id);
      // The login time carries over: refreshing does not make a session fresh.
      expect(claims.authTime).toBe(authTime);
      expect(claims.exp).toBeGreaterThan(Date.now() / 1000 + 3600);
      const whoami = await call("GET", "/user/v1/whoami", { auth: reply.raw });
      expect(whoami.status, whoami.raw).toBe(200);
      expect((whoami.body as { id: number }).id).toBe(user.id);

      // A user API key is no session: nothing to refresh.
      const key = await call("POST", "/api-key/user/full", {
        auth: await sessionOf(user),
        payload: { name: "refresh-key" },
      });
      expect(key.status, key.raw).toBe(200);
      const refused = await call("GET", "/user/v1/refresh-token", { auth: key.body as string });
      expect(refused.status, refused.raw).toBe(401);
    });

    it("refuses an expired JWT, a foreign one, and one of another session generation", async () => {
      const user = await createUser("badjwt");
      const now = Math.floor(Date.now() / 1000);
      const good = await signSession(user);
      expect((await call("GET", "/user/v1/whoami", { auth: good })).status).toBe(200);
      for (const [what, token] of [
        ["expired", await signSession(user, { authTime: now - 7200, expires: now - 60 })],
        ["foreign secret", await signSession(user, { secret: new TextEncoder().encode("x".repeat(48)) })],
        ["old session generation", await signSession(user, { jwtSecretClaim: "stale" })],
        ["tampered", `${good.slice(0, -4)}AAAA`],
      ] as const) {
        const reply = await call("GET", "/user/v1/whoami", { auth: token });
        expect(reply.status, `${what}: ${reply.raw}`).toBe(401);
      }
    });
  });

  // --- whoami ---

  describe("whoami", () => {
    it("/actor/v1/whoami of a user, a provisioning key and a device key", async () => {
      const user = await createUser("actor");
      const token = await sessionOf(user);
      const asUser = await call("GET", "/actor/v1/whoami", { auth: token });
      expect(asUser.status, asUser.raw).toBe(200);
      expect(asUser.body).toEqual({
        id: user.actor,
        actorType: "user",
        actorTypeId: user.id,
        username: user.username,
        email: user.email,
      });

      const { fleet, device } = await fleetOf(user);
      const provisioning = await call("POST", `/api-key/application/${fleet.id}/provisioning`, {
        auth: token,
        payload: {},
      });
      expect(provisioning.status, provisioning.raw).toBe(200);
      const fleetKey = provisioning.body as string;
      const asFleet = await call("GET", "/actor/v1/whoami", { auth: fleetKey });
      expect(asFleet.status, asFleet.raw).toBe(200);
      expect(asFleet.body).toEqual({
        id: fleet.actor,
        actorType: "application",
        actorTypeId: fleet.id,
        slug: fleet.slug,
      });

      const deviceReply = await call("POST", `/api-key/device/${device.id}/device-key`, {
        auth: token,
        payload: {},
      });
      expect(deviceReply.status, deviceReply.raw).toBe(200);
      const deviceKey = deviceReply.body as string;
      const asDevice = await call("GET", "/actor/v1/whoami", { auth: deviceKey });
      expect(asDevice.status, asDevice.raw).toBe(200);
      expect(asDevice.body).toEqual({
        id: device.actor,
        actorType: "device",
        actorTypeId: device.id,
        uuid: device.uuid,
      });

      // /user/v1/whoami is for users only.
      for (const key of [fleetKey, deviceKey]) {
        const refused = await call("GET", "/user/v1/whoami", { auth: key });
        expect(refused.status, refused.raw).toBe(401);
      }
    });

    it("a credential may come as ?apikey=", async () => {
      const user = await createUser("querykey");
      const key = await call("POST", "/api-key/user/full", {
        auth: await sessionOf(user),
        payload: { name: "as-query" },
      });
      expect(key.status, key.raw).toBe(200);
      const whoami = await call("GET", `/user/v1/whoami?apikey=${key.body as string}`, { auth: null });
      expect(whoami.status, whoami.raw).toBe(200);
      expect(whoami.body).toEqual({ id: user.id, username: user.username, email: user.email });
      const odata = await call("GET", `/v6/user?$select=username&apikey=${key.body as string}`, {
        auth: null,
      });
      expect(odata.status, odata.raw).toBe(200);
      expect((odata.body as { d: unknown[] }).d).toEqual([{ username: user.username }]);
    });
  });

  // --- API keys ---

  describe("API keys", () => {
    it("POST /api-key/user/full answers the key once, as a JSON string, and stores only a hash", async () => {
      const user = await createUser("fullkey");
      const name = `full-${kind}-${user.id}`;
      const reply = await call("POST", "/api-key/user/full", {
        auth: await sessionOf(user),
        payload: { name, description: "for the CLI" },
      });
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["content-type"]).toMatch(/^application\/json/);
      expect(typeof reply.body).toBe("string");
      const key = reply.body as string;
      expect(key.length).toBeGreaterThanOrEqual(20);

      const whoami = await call("GET", "/user/v1/whoami", { auth: key });
      expect(whoami.status, whoami.raw).toBe(200);
      expect(whoami.body).toEqual({ id: user.id, username: user.username, email: user.email });

      // Only a hash is stored: no column holds the key.
      const rows = await server.test.db.prisma.apiKey.findMany();
      const stored = rows.find((row) => row.name === name);
      expect(stored).toMatchObject({
        is_of__actor: user.actor,
        description: "for the CLI",
        expiry_date: null,
      });
      for (const row of rows) {
        for (const value of Object.values(row)) expect(String(value)).not.toContain(key);
      }
      const raw = await server.test.db.query<Record<string, unknown>>({
        text: `SELECT * FROM "api_key"`,
        values: [],
      });
      expect(JSON.stringify(raw)).not.toContain(key);

      // OData shows the key's metadata but never its hash.
      const listed = await call("GET", `/v6/api_key?$filter=name eq '${name}'`, { auth: key });
      expect(listed.status, listed.raw).toBe(200);
      const [entity] = (listed.body as { d: Record<string, unknown>[] }).d;
      expect(entity).toMatchObject({ name, description: "for the CLI" });
      expect(entity).not.toHaveProperty("key_hash");
      expect(listed.raw).not.toContain(stored?.key_hash ?? "no-hash");
      const all = await call("GET", "/v6/api_key");
      expect(all.status, all.raw).toBe(200);
      for (const each of (all.body as { d: Record<string, unknown>[] }).d)
        expect(each).not.toHaveProperty("key_hash");
      for (const url of [
        "/v6/api_key?$select=key_hash",
        "/v6/api_key?$filter=key_hash eq 'x'",
        "/v6/api_key?$orderby=key_hash",
      ]) {
        const refused = await call("GET", url);
        expect(refused.status, `${url}: ${refused.raw}`).toBe(400);
        expect(refused.raw).toContain("Unknown field");
      }
      // Keys cannot be made through OData (the key would never be shown).
      const odataCreate = await call("POST", "/v6/api_key", { payload: { name: "x" } });
      expect(odataCreate.status, odataCreate.raw).toBe(400);

      // Each call makes a new key.
      const second = await call("POST", "/api-key/user/full", {
        auth: await sessionOf(user),
        payload: { name },
      });
      expect(second.status, second.raw).toBe(200);
      expect(second.body).not.toBe(key);
    });

    it("POST /api-key/user/full needs a name and a fresh session token", async () => {
      const user = await createUser("fresh");
      const now = Math.floor(Date.now() / 1000);

      const noName = await call("POST", "/api-key/user/full", { auth: await sessionOf(user), payload: {} });
      expect(noName.status, noName.raw).toBe(400);

      const recent = await signSession(user, { authTime: now - 19 * 60 });
      const ok = await call("POST", "/api-key/user/full", { auth: recent, payload: { name: "recent" } });
      expect(ok.status, ok.raw).toBe(200);

      const old = await signSession(user, { authTime: now - 21 * 60 });
      // The old token is a valid session otherwise.
      expect((await call("GET", "/user/v1/whoami", { auth: old })).status).toBe(200);
      const stale = await call("POST", "/api-key/user/full", { auth: old, payload: { name: "stale" } });
      expect(stale.status, stale.raw).toBe(401);
      expect(stale.body).toBe("Fresh authentication token required");

      // Refreshing an old session does not make it fresh.
      const refreshed = await call("GET", "/user/v1/refresh-token", { auth: old });
      expect(refreshed.status, refreshed.raw).toBe(200);
      const stillStale = await call("POST", "/api-key/user/full", {
        auth: refreshed.raw,
        payload: { name: "stale" },
      });
      expect(stillStale.status, stillStale.raw).toBe(401);
      expect(stillStale.body).toBe("Fresh authentication token required");

      // An API key is no fresh login either.
      const viaKey = await call("POST", "/api-key/user/full", {
        auth: ok.body as string,
        payload: { name: "from-key" },
      });
      expect(viaKey.status, viaKey.raw).toBe(401);
      expect(viaKey.body).toBe("Fresh authentication token required");
      expect(
        await server.test.db.prisma.apiKey.count({ where: { name: { in: ["stale", "from-key"] } } }),
      ).toBe(0);
    });

    it("POST /api-key/v1 and /v2; v2 requires expiryDate", async () => {
      const user = await createUser("versioned");
      const token = await sessionOf(user);
      const v1 = await call("POST", "/api-key/v1", {
        auth: token,
        payload: { actorType: "user", actorTypeId: user.id, roles: ["named-user-api-key"], name: "v1-key" },
      });
      expect(v1.status, v1.raw).toBe(200);
      expect(typeof v1.body).toBe("string");
      const v1Whoami = await call("GET", "/user/v1/whoami", { auth: v1.body as string });
      expect(v1Whoami.status, v1Whoami.raw).toBe(200);
      expect((v1Whoami.body as { id: number }).id).toBe(user.id);

      const missing = await call("POST", "/api-key/v2", {
        auth: token,
        payload: { actorType: "user", actorTypeId: user.id, roles: [], name: "v2-missing" },
      });
      expect(missing.status, missing.raw).toBe(400);
      expect(missing.raw).toContain("expiryDate");

      const v2 = await call("POST", "/api-key/v2", {
        auth: token,
        payload: { actorType: "user", actorTypeId: user.id, roles: [], name: "v2-key", expiryDate: null },
      });
      expect(v2.status, v2.raw).toBe(200);
      expect((await call("GET", "/user/v1/whoami", { auth: v2.body as string })).status).toBe(200);

      const expiry = new Date(Date.now() + 86_400_000).toISOString();
      const v2Dated = await call("POST", "/api-key/v2", {
        auth: token,
        payload: { actorType: "user", actorTypeId: user.id, roles: [], name: "v2-dated", expiryDate: expiry },
      });
      expect(v2Dated.status, v2Dated.raw).toBe(200);
      const dated = await server.test.db.prisma.apiKey.findFirstOrThrow({
        where: { name: "v2-dated", is_of__actor: user.actor },
      });
      expect(dated.expiry_date?.toISOString()).toBe(expiry);

      // Keys for a fleet and a device the user may write.
      const { fleet, device } = await fleetOf(user);
      const forFleet = await call("POST", "/api-key/v2", {
        auth: token,
        payload: { actorType: "application", actorTypeId: fleet.id, roles: [], expiryDate: null },
      });
      expect(forFleet.status, forFleet.raw).toBe(200);
      const fleetWhoami = await call("GET", "/actor/v1/whoami", { auth: forFleet.body as string });
      expect(fleetWhoami.body).toMatchObject({ actorType: "application", actorTypeId: fleet.id });
      const forDevice = await call("POST", "/api-key/v1", {
        auth: token,
        payload: { actorType: "device", actorTypeId: device.id, roles: [] },
      });
      expect(forDevice.status, forDevice.raw).toBe(200);
      const deviceWhoami = await call("GET", "/actor/v1/whoami", { auth: forDevice.body as string });
      expect(deviceWhoami.body).toMatchObject({ actorType: "device", actorTypeId: device.id });

      // Bad bodies.
      for (const payload of [
        { actorType: "robot", actorTypeId: user.id, roles: [], expiryDate: null },
        { actorType: "user", actorTypeId: user.id, roles: "all", expiryDate: null },
        { actorType: "user", actorTypeId: user.id, roles: [], expiryDate: "not a date" },
      ]) {
        const reply = await call("POST", "/api-key/v2", { auth: token, payload });
        expect(reply.status, `${JSON.stringify(payload)}: ${reply.raw}`).toBe(400);
      }
    });

    it("a user gets no key for someone else, nor for a fleet or device outside their organizations", async () => {
      const user = await createUser("outsider");
      const victim = await createUser("victim");
      const { fleet, device } = await fleetOf(victim);
      const token = await sessionOf(user);
      const before = await server.test.db.prisma.apiKey.count();
      const attempts: [string, unknown][] = [
        ["/api-key/v1", { actorType: "user", actorTypeId: victim.id, roles: [] }],
        ["/api-key/v1", { actorType: "application", actorTypeId: fleet.id, roles: [] }],
        ["/api-key/v2", { actorType: "device", actorTypeId: device.id, roles: [], expiryDate: null }],
        [`/api-key/application/${fleet.id}/provisioning`, {}],
        [`/api-key/device/${device.id}/device-key`, {}],
      ];
      for (const [url, payload] of attempts) {
        const reply = await call("POST", url, { auth: token, payload });
        // Issue 19: a fleet or device the caller cannot see is open-balena-api's 500 "No … found to
        // associate with the api key", which balena-sdk reports as not found.
        expect([401, 403, 404, 500], `${url} ${JSON.stringify(payload)}: ${reply.raw}`).toContain(
          reply.status,
        );
        if (reply.status === 500)
          expect(reply.body).toMatch(/^No (application|device) found to associate with the api key$/);
      }
      expect(await server.test.db.prisma.apiKey.count()).toBe(before);
    });

    it("a key whose expiryDate has passed is refused", async () => {
      const user = await createUser("expiring");
      const token = await sessionOf(user);
      const past = await call("POST", "/api-key/user/full", {
        auth: token,
        payload: { name: "past", expiryDate: new Date(Date.now() - 60_000).toISOString() },
      });
      expect(past.status, past.raw).toBe(200);
      const refused = await call("GET", "/user/v1/whoami", { auth: past.body as string });
      expect(refused.status, refused.raw).toBe(401);
      expect((await call("GET", "/v6/user", { auth: past.body as string })).status).toBe(401);

      const future = await call("POST", "/api-key/v2", {
        auth: token,
        payload: {
          actorType: "user",
          actorTypeId: user.id,
          roles: [],
          name: "future",
          expiryDate: new Date(Date.now() + 3_600_000).toISOString(),
        },
      });
      expect(future.status, future.raw).toBe(200);
      const futureKey = future.body as string;
      expect((await call("GET", "/user/v1/whoami", { auth: futureKey })).status).toBe(200);

      // Moving the expiry into the past through OData ends the key at once.
      const id = await keyIdByName("future");
      const patched = await call("PATCH", `/v6/api_key(${id})`, {
        payload: { expiry_date: new Date(Date.now() - 1000).toISOString() },
      });
      expect(patched.status, patched.raw).toBe(200);
      expect((await call("GET", "/user/v1/whoami", { auth: futureKey })).status).toBe(401);
    });

    it("DELETE /v6/api_key(id) revokes a key at once", async () => {
      const user = await createUser("revoke");
      const token = await sessionOf(user);
      const made = await call("POST", "/api-key/user/full", {
        auth: token,
        payload: { name: "revoked-by-admin" },
      });
      const own = await call("POST", "/api-key/user/full", {
        auth: token,
        payload: { name: "revoked-by-self" },
      });
      expect(made.status, made.raw).toBe(200);
      expect(own.status, own.raw).toBe(200);
      const key = made.body as string;
      const ownKey = own.body as string;
      // Used (and so cached) before the revocation.
      expect((await call("GET", "/user/v1/whoami", { auth: key })).status).toBe(200);
      expect((await call("GET", "/v6/user", { auth: ownKey })).status).toBe(200);

      const deleted = await call("DELETE", `/v6/api_key(${await keyIdByName("revoked-by-admin")})`);
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.headers["x-affected-rows"]).toBe("1");
      const after = await call("GET", "/user/v1/whoami", { auth: key });
      expect(after.status, after.raw).toBe(401);

      const selfDeleted = await call("DELETE", `/v6/api_key(${await keyIdByName("revoked-by-self")})`, {
        auth: token,
      });
      expect(selfDeleted.status, selfDeleted.raw).toBe(200);
      expect(selfDeleted.headers["x-affected-rows"]).toBe("1");
      expect((await call("GET", "/v6/user", { auth: ownKey })).status).toBe(401);
      // The session itself still works.
      expect((await call("GET", "/user/v1/whoami", { auth: token })).status).toBe(200);
    });
  });

  // --- the signing secret and password changes ---

  describe("signing secret and sessions", () => {
    it("without JWT_SECRET the secret is generated once and kept in the setting table", async () => {
      const setting = await server.test.db.prisma.setting.findUniqueOrThrow({
        where: { name: "jwt_secret" },
      });
      expect(setting.value.length).toBeGreaterThanOrEqual(32);
      const user = await createUser("secret");
      const token = await sessionOf(user);
      // The server's tokens are signed with it.
      const mine = await signSession(user);
      expect((await call("GET", "/user/v1/whoami", { auth: mine })).status).toBe(200);

      // A second server on the same database keeps the secret, and accepts the first one's tokens.
      const second = await buildServer({
        db: server.test.db,
        model: buildModel(),
        config: loadConfig({ LOG_LEVEL: "silent" }),
        logger: createLogger("silent"),
      });
      try {
        const whoami = await second.inject({
          method: "GET",
          url: "/user/v1/whoami",
          headers: { authorization: `Bearer ${token}` },
        });
        expect(whoami.statusCode, whoami.body).toBe(200);
      } finally {
        await second.close();
      }
      const again = await server.test.db.prisma.setting.findUniqueOrThrow({ where: { name: "jwt_secret" } });
      expect(again.value).toBe(setting.value);
    });

    it("JWT_SECRET, when set, signs the tokens instead", async () => {
      const user = await createUser("configured");
      const configuredSecret = `configured-secret-${kind}-0123456789abcdef`;
      const configured = await buildServer({
        db: server.test.db,
        model: buildModel(),
        config: loadConfig({ LOG_LEVEL: "silent", JWT_SECRET: configuredSecret }),
        logger: createLogger("silent"),
      });
      try {
        const reply = await configured.inject({
          method: "POST",
          url: "/login_",
          headers: { "content-type": "application/json" },
          payload: JSON.stringify({ username: user.username, password: user.password }),
          remoteAddress: freshAddress(),
        });
        expect(reply.statusCode, reply.body).toBe(200);
        const token = reply.body;
        const whoami = await configured.inject({
          method: "GET",
          url: "/user/v1/whoami",
          headers: { authorization: `Bearer ${token}` },
        });
        expect(whoami.statusCode, whoami.body).toBe(200);
        // Signed with the configured secret, so the server with the stored secret refuses it.
        expect((await call("GET", "/user/v1/whoami", { auth: token })).status).toBe(401);
        const ours = await signSession(user, { secret: new TextEncoder().encode(configuredSecret) });
        const accepted = await configured.inject({
          method: "GET",
          url: "/user/v1/whoami",
          headers: { authorization: `Bearer ${ours}` },
        });
        expect(accepted.statusCode, accepted.body).toBe(200);
      } finally {
        await configured.close();
      }
    });

    it("changing a password ends the user's sessions; a new login works", async () => {
      const user = await createUser("rotate");
      const first = await sessionOf(user);
      const second = await sessionOf(user);
      expect((await call("GET", "/user/v1/whoami", { auth: first })).status).toBe(200);
      const refreshed = await call("GET", "/user/v1/refresh-token", { auth: second });
      expect(refreshed.status).toBe(200);

      const newPassword = "a-brand-new-password";
      const patched = await call("PATCH", `/v6/user(${user.id})`, { payload: { password: newPassword } });
      expect(patched.status, patched.raw).toBe(200);
      const row = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
      expect(row.password).toMatch(/^scrypt\$/);
      expect(row.password).not.toContain(newPassword);

      for (const token of [first, second, refreshed.raw]) {
        const reply = await call("GET", "/user/v1/whoami", { auth: token });
        expect(reply.status, reply.raw).toBe(401);
        expect((await call("GET", "/user/v1/refresh-token", { auth: token })).status).toBe(401);
      }
      expect((await login(user.username, user.password)).status).toBe(401);
      const fresh = await login(user.username, newPassword);
      expect(fresh.status, fresh.raw).toBe(200);
      const whoami = await call("GET", "/user/v1/whoami", { auth: fresh.raw });
      expect(whoami.status, whoami.raw).toBe(200);
      expect(whoami.body).toEqual({ id: user.id, username: user.username, email: user.email });
    });

    it("a user changing their own password ends their other sessions too", async () => {
      const user = await createUser("selfrotate");
      const token = await sessionOf(user);
      const other = await sessionOf(user);
      const patched = await call("PATCH", `/v6/user(${user.id})`, {
        auth: token,
        payload: { password: "changed-by-myself" },
      });
      expect(patched.status, patched.raw).toBe(200);
      expect(patched.headers["x-affected-rows"]).toBe("1");
      expect((await call("GET", "/user/v1/whoami", { auth: other })).status).toBe(401);
      expect((await call("GET", "/user/v1/whoami", { auth: token })).status).toBe(401);
      expect((await login(user.username, "changed-by-myself")).status).toBe(200);
    });

    it("a change of email shows at once, not after the credential cache expires", async () => {
      const user = await createUser("email");
      const token = await sessionOf(user);
      expect((await call("GET", "/user/v1/whoami", { auth: token })).body).toMatchObject({
        email: user.email,
      });
      const email = `changed-${user.username}@example.com`;
      const patched = await call("PATCH", `/v6/user(${user.id})`, { payload: { email } });
      expect(patched.status, patched.raw).toBe(200);
      const whoami = await call("GET", "/user/v1/whoami", { auth: token });
      expect(whoami.status, whoami.raw).toBe(200);
      expect(whoami.body).toEqual({ id: user.id, username: user.username, email });
    });
  });
});
