import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { loadConfig } from "../../src/config.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A credential is the caller it names now, on every instance: a device deleted or moved to another
// fleet, a key deleted, an admin demoted — the next request after the write is answered with the
// rights as they are then, not those a credential cache remembered for a few seconds. On the
// instance that made the write this holds at once; on another it holds once the change's
// announcement (channels.credential, from triggers) arrives, milliseconds later, well within the
// cache's 5 s.

interface World {
  server: TestServer;
  fleets: [number, number];
}

async function send(server: TestServer, method: string, url: string, body?: unknown, bearer?: string) {
  const reply = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer ?? server.adminKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  return { status: reply.status, text };
}

let organization: number;

async function world(server: TestServer): Promise<World> {
  await loadDefaultCatalogue(server.test.db);
  const org = await send(server, "POST", "/v6/organization", { name: "announcers", handle: "announcers" });
  expect(org.status, org.text).toBe(201);
  organization = (JSON.parse(org.text) as { id: number }).id;
  const fleets: number[] = [];
  for (const name of ["announce-a", "announce-b"]) {
    const created = await send(server, "POST", "/v6/application", {
      app_name: name,
      device_type: "raspberrypi4-64",
      organization,
    });
    expect(created.status, created.text).toBe(201);
    const id = (JSON.parse(created.text) as { id: number }).id;
    fleets.push(id);
    const variable = await send(server, "POST", "/v6/application_environment_variable", {
      application: id,
      name: "SECRET",
      value: `secret-of-${name}`,
    });
    expect(variable.status, variable.text).toBe(201);
  }
  return { server, fleets: fleets as [number, number] };
}

async function registerDevice(server: TestServer, fleet: number, uuid: string) {
  const registered = await send(server, "POST", "/device/register", { application: fleet, uuid });
  expect(registered.status, registered.text).toBe(201);
  return JSON.parse(registered.text) as { id: number; api_key: string };
}

const secretsSeenBy = async (server: TestServer, key: string) => {
  const reply = await send(
    server,
    "GET",
    "/v6/application_environment_variable?$select=value",
    undefined,
    key,
  );
  return reply.status === 200
    ? (JSON.parse(reply.text) as { d: { value: string }[] }).d.map((row) => row.value)
    : reply.status;
};

describe.each(databaseKinds)("credentials after the write that ends or changes them, on %s", (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await world(await startTestServer(kind));
  }, 120_000);
  afterAll(() => w?.server.close());

  it("a deleted device's key is refused at once: it no longer reads its fleet's variables", async () => {
    const device = await registerDevice(w.server, w.fleets[0], "d".repeat(32));
    expect(await secretsSeenBy(w.server, device.api_key)).toEqual(["secret-of-announce-a"]);
    expect((await send(w.server, "DELETE", `/v6/device(${device.id})`)).status).toBe(200);
    expect(await secretsSeenBy(w.server, device.api_key)).toBe(401);
  });

  it("a device moved to another fleet reads the new fleet's variables at once, never the old one's", async () => {
    const device = await registerDevice(w.server, w.fleets[0], "e".repeat(32));
    expect(await secretsSeenBy(w.server, device.api_key)).toEqual(["secret-of-announce-a"]);
    const moved = await send(w.server, "PATCH", `/v6/device(${device.id})`, {
      belongs_to__application: w.fleets[1],
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await secretsSeenBy(w.server, device.api_key)).toEqual(["secret-of-announce-b"]);
  });

  it("a fleet deleted takes its key with it at once", async () => {
    const created = await send(w.server, "POST", "/v6/application", {
      app_name: "announce-gone",
      device_type: "raspberrypi4-64",
      organization,
    });
    const fleet = (JSON.parse(created.text) as { id: number }).id;
    const key = await send(w.server, "POST", `/api-key/application/${fleet}/provisioning`, {});
    expect(key.status, key.text).toBe(200);
    const provisioning = JSON.parse(key.text) as string;
    expect(
      (await send(w.server, "GET", `/v6/application(${fleet})?$select=id`, undefined, provisioning)).status,
    ).toBe(200);
    expect((await send(w.server, "DELETE", `/v6/application(${fleet})`)).status).toBe(200);
    expect(
      (await send(w.server, "GET", `/v6/application(${fleet})?$select=id`, undefined, provisioning)).status,
    ).toBe(401);
  });
});

describe.skipIf(!inject("postgres"))("credentials on a second instance of the same database", () => {
  let w: World;
  let second: TestServer;
  beforeAll(async () => {
    w = await world(await startTestServer("postgres"));
    const db = openPostgres({ url: w.server.test.url as string, poolSize: 4 });
    const app = await buildServer({
      db,
      model: buildModel(),
      config: loadConfig({ LOG_LEVEL: "silent" }),
      logger: createLogger("silent"),
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    second = {
      ...w.server,
      url,
      async close() {
        await app.close();
        await db.close();
      },
    };
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await w?.server.close();
  });

  /** Asks `ask` until it answers `expected`; how long that took from `since`, in ms. */
  async function until(ask: () => Promise<unknown>, expected: unknown, since: number): Promise<number> {
    for (;;) {
      const got = await ask();
      if (JSON.stringify(got) === JSON.stringify(expected)) return performance.now() - since;
      if (performance.now() - since > 10_000) throw new Error(`still ${JSON.stringify(got)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it("follows a device deleted and a device moved through the other instance within moments, not the cache's 5 s", async () => {
    const deleted = await registerDevice(w.server, w.fleets[0], "f".repeat(32));
    const moved = await registerDevice(w.server, w.fleets[0], "a".repeat(32));
    // Both keys now cached by the second instance.
    expect(await secretsSeenBy(second, deleted.api_key)).toEqual(["secret-of-announce-a"]);
    expect(await secretsSeenBy(second, moved.api_key)).toEqual(["secret-of-announce-a"]);
    const cachedAt = performance.now();
    expect((await send(w.server, "DELETE", `/v6/device(${deleted.id})`)).status).toBe(200);
    expect(
      (await send(w.server, "PATCH", `/v6/device(${moved.id})`, { belongs_to__application: w.fleets[1] }))
        .status,
    ).toBe(200);
    expect(await until(() => secretsSeenBy(second, deleted.api_key), 401, cachedAt)).toBeLessThan(4_000);
    expect(
      await until(() => secretsSeenBy(second, moved.api_key), ["secret-of-announce-b"], cachedAt),
    ).toBeLessThan(4_000);
  });

  it("follows a key deleted and an admin demoted through the other instance", async () => {
    const user = await send(w.server, "POST", "/v6/user", {
      username: "announced",
      email: "announced@example.com",
      password: "announced-password",
    });
    expect(user.status, user.text).toBe(201);
    const userId = (JSON.parse(user.text) as { id: number }).id;
    // Admin rights are given and taken outside the API (the shell): any writer is heard.
    const setAdmin = (admin: boolean) =>
      w.server.test.db.query({
        text: `UPDATE "user" SET "is_admin" = $1::boolean WHERE "id" = $2::int4`,
        values: [admin, userId],
      });
    await setAdmin(true);
    const login = await fetch(`${w.server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "announced", password: "announced-password" }),
    });
    const token = await login.text();
    const keyReply = await send(w.server, "POST", "/api-key/user/full", { name: "announced" }, token);
    expect(keyReply.status, keyReply.text).toBe(200);
    const key = JSON.parse(keyReply.text) as string;
    const everyFleet = async (bearer: string) => {
      const reply = await send(
        second,
        "GET",
        "/v6/application?$select=id&$filter=startswith(app_name,'announce-')",
        undefined,
        bearer,
      );
      return reply.status === 200 ? (JSON.parse(reply.text) as { d: unknown[] }).d.length : reply.status;
    };
    expect(await everyFleet(key)).toBe(2);
    expect(await everyFleet(token)).toBe(2);
    const cachedAt = performance.now();
    await setAdmin(false);
    expect(await until(() => everyFleet(token), 0, cachedAt)).toBeLessThan(4_000);
    const keys = await send(w.server, "GET", `/v6/api_key?$select=id&$filter=name eq 'announced'`);
    const keyId = (JSON.parse(keys.text) as { d: { id: number }[] }).d[0]?.id;
    const deletedAt = performance.now();
    expect(await everyFleet(key)).toBe(0);
    expect((await send(w.server, "DELETE", `/v6/api_key(${keyId})`)).status).toBe(200);
    expect(await until(() => everyFleet(key), 401, deletedAt)).toBeLessThan(4_000);
  });
});
