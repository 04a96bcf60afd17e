import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultThrottleOptions } from "../../src/auth/throttle.ts";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/database.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 45, "One throttle for all instances": two servers on one PostgreSQL database, each with
// its own pool, as two instances behind a balancer. A client's failures count once, whichever
// instance they reach: N instances do not give N times the allowances. (The embedded database
// has one instance only.)

const { pair, address } = defaultThrottleOptions;

describe.runIf(databaseKinds.includes("postgres"))("POST /login_ on two instances of one database", () => {
  let test: TestDatabase;
  let second: Database;
  let instances: FastifyInstance[];

  beforeAll(async () => {
    test = await freshDatabase("postgres");
    second = openPostgres({ url: test.url ?? "", poolSize: 4 });
    const config = loadConfig({ LOG_LEVEL: "silent" });
    instances = await Promise.all(
      [test.db, second].map((db) =>
        buildServer({ db, model: buildModel(), config, logger: createLogger("silent") }),
      ),
    );
  });
  afterAll(async () => {
    await Promise.all(instances.map((app) => app.close()));
    await second.close();
    await test.drop();
  });

  async function login(instance: number, username: string, remoteAddress: string): Promise<number> {
    const response = await instances[instance % 2]?.inject({
      method: "POST",
      url: "/login_",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ username, password: "wrong-password" }),
      remoteAddress,
    });
    return response?.statusCode ?? 0;
  }

  it("gives a pair its free failures once, whichever instance each attempt reaches", async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt <= pair.free + 1; attempt++)
      statuses.push(await login(attempt, "shared-pair", "203.0.113.10"));
    expect(statuses).toEqual([...Array(pair.free + 1).fill(401), 429]);
    // The wait holds on both instances.
    expect([
      await login(0, "shared-pair", "203.0.113.10"),
      await login(1, "shared-pair", "203.0.113.10"),
    ]).toEqual([429, 429]);
  });

  it("gives an address its free failures over many usernames once, over both instances", async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt <= address.free + 1; attempt++)
      statuses.push(await login(attempt, `nobody-${attempt}`, "203.0.113.20"));
    expect(statuses).toEqual([...Array(address.free + 1).fill(401), 429]);
  });

  it("lets a burst of parallel guesses on both instances past the pair's free failures no further", async () => {
    const burst = await Promise.all(
      Array.from({ length: 24 }, (_, attempt) => login(attempt, "burst-target", "203.0.113.30")),
    );
    // One at a time beyond the free allowance: at most the free ones and one more are checked.
    expect(burst.filter((status) => status === 401).length).toBeLessThanOrEqual(pair.free + 1);
    expect(burst.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  });
});

describe.each(databaseKinds)("POST /login_ under attack from one IPv6 /48 on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { LOGIN_THROTTLE_USERNAME_FREE: "10" });
  });
  afterAll(() => server.close());

  const login = async (remoteAddress: string) =>
    (
      await server.app.inject({
        method: "POST",
        url: "/login_",
        headers: { "content-type": "application/json", authorization: "" },
        payload: JSON.stringify({ username: "victim", password: "wrong-password" }),
        remoteAddress,
      })
    ).statusCode;

  it("gives the /48 one guess at the account, not one per /64", async () => {
    // Eleven addresses put the account under attack.
    for (let i = 0; i <= 10; i++) expect(await login(`198.18.0.${i}`)).toBe(401);
    expect(await login("2001:db8:7:1::1")).toBe(401);
    const others: number[] = [];
    for (let subnet = 2; subnet < 40; subnet++)
      others.push(await login(`2001:db8:7:${subnet.toString(16)}::1`));
    expect(others).toEqual(Array(others.length).fill(429));
    // Another /48 is another client.
    expect(await login("2001:db8:8::1")).toBe(401);
  });
});
