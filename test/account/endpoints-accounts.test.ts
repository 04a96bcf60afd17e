import { decodeJwt, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  type CallOptions,
  credentialEndpoints,
  JWT,
  type Method,
} from "../support/account/credential-endpoints.ts";
import { databaseKinds } from "../support/databases.ts";
import { World } from "../support/odata/write-world.ts";

// The credential endpoints through the real server: users and organizations made over OData, /login_,
// whoami, and what needs no credential (API keys, sessions and the signing secret:
// endpoints-keys.test.ts; throttling: test/auth/login-throttle.test.ts).

describe.each(databaseKinds)("credential endpoints: accounts on %s", (kind) => {
  const { db, call, freshAddress, login, sessionOf, createUser, signSession, fleetOf } =
    credentialEndpoints(kind);

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
      const before = await db().prisma.organization.count();
      await call("POST", "/v6/organization", { auth: "nope", payload: { name: "x", handle: "nope-org" } });
      expect(await db().prisma.organization.count()).toBe(before);
    });
  });

  // --- users and organizations through OData ---

  describe("users and organizations", () => {
    it("POST /v6/user stores a scrypt hash and makes a personal organization the user owns", async () => {
      const user = await createUser("alice");
      const row = await db().prisma.user.findUniqueOrThrow({ where: { id: user.id } });
      expect(row.username).toBe(user.username);
      expect(row.email).toBe(user.email);
      expect(row.password).not.toContain(user.password);
      expect(row.password).toMatch(/^scrypt\$/);
      expect(row.is_admin).toBe(false);

      const organization = await db().prisma.organization.findFirstOrThrow({
        where: { handle: user.username },
      });
      expect(organization.name).toBe(user.username);
      const memberships = await db().prisma.organizationMembership.findMany({
        where: { user: user.id },
        include: { Role: true },
      });
      expect(memberships.map((m) => [m.is_member_of__organization, m.Role.name])).toEqual([
        [organization.id, "administrator"],
      ]);

      // Two users with the same password get different hashes (salted).
      const twin = await createUser("alice");
      const twinRow = await db().prisma.user.findUniqueOrThrow({ where: { id: twin.id } });
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
      const world = new World(db(), `orgupdate${kind}`);
      const organization = await world.organization();
      for (const [method, payload] of [
        ["PUT", { name: "Renamed", handle: `${organization.handle}-put` }],
        ["PATCH", { name: "Renamed again", handle: `${organization.handle}-patch` }],
      ] as const) {
        const reply = await call(method, `/v6/organization(${organization.id})`, { payload });
        expect(reply.status, `${method}: ${reply.raw}`).toBe(200);
      }
      const memberships = await db().prisma.organizationMembership.findMany({
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
      expect(await db().prisma.user.count({ where: { username: { in: ["shorty", "no spaces"] } } })).toBe(0);
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
      const rows = await db().prisma.organizationMembership.findMany({
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
});
