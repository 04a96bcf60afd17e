import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { withDatabase } from "../support/global-setup.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 21: /readyz is 200 while the database answers and 503 while it does not, and comes back by
// itself; /ping (liveness) and /metrics answer throughout.

const noCredential = { authorization: "" };

/** Polls until `check` holds, or fails after `ms`. */
async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(databaseKinds)("GET /readyz on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  const get = (url: string) => server.app.inject({ method: "GET", url, headers: noCredential });

  it("is 200 once the server is up, beside /ping", async () => {
    const ready = await get("/readyz");
    expect(ready.statusCode).toBe(200);
    expect(ready.body).toBe("ready");
    expect(ready.headers["cache-control"]).toBe("no-store");
    expect((await get("/ping")).statusCode).toBe(200);
  });

  it("does not look up a credential, so a probe with one answers even while the database is away", async () => {
    const probe = await server.app.inject({
      method: "GET",
      url: "/readyz",
      headers: { authorization: "Bearer not-a-key" },
    });
    expect(probe.statusCode).toBe(200);
    expect(probe.headers["x-sql-statements"]).toBe("0");
  });
});

describe.runIf(databaseKinds.includes("postgres"))("GET /readyz while PostgreSQL is away", () => {
  let server: TestServer;
  let admin: pg.Client;
  let name: string;
  beforeAll(async () => {
    server = await startTestServer("postgres");
    const postgres = inject("postgres");
    if (!postgres || !server.test.url) throw new Error("PostgreSQL is not available");
    name = new URL(server.test.url).pathname.slice(1);
    admin = new pg.Client({ connectionString: withDatabase(postgres.serverUrl, "postgres") });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`).catch(() => {});
    await admin?.end();
    await server?.close();
  });

  const get = (url: string) => server.app.inject({ method: "GET", url, headers: noCredential });

  it("goes 503 when the database takes no connections, and back to 200 by itself", async () => {
    expect((await get("/readyz")).statusCode).toBe(200);
    // The database stops: no new connection is accepted and every open one is ended.
    await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
    await admin.query({
      text: "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      values: [name],
    });
    await until(async () => (await get("/readyz")).statusCode === 503);
    const away = await get("/readyz");
    expect(away.statusCode).toBe(503);
    expect(away.body).toBe("database unavailable");
    // Liveness and metrics do not need the database.
    expect((await get("/ping")).statusCode).toBe(200);
    const scrape = await get("/metrics");
    expect(scrape.statusCode).toBe(200);
    expect(scrape.body).toMatch(
      /fleetgate_http_requests_total\{method="GET",route="\/readyz",status="503"\} [1-9]/,
    );
    // An API request gets the outage's 503, with Retry-After.
    const read = await server.app.inject({ method: "GET", url: "/v6/device?$top=1" });
    expect(read.statusCode).toBe(503);

    // The database is back: nobody restarts the server.
    await admin.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
    await until(async () => (await get("/readyz")).statusCode === 200);
    expect((await server.app.inject({ method: "GET", url: "/v6/device?$top=1" })).statusCode).toBe(200);
  });
});
