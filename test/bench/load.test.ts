import { createServer, type Server } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { load, type Target } from "../../bench/load.ts";
import { PostgresCpu } from "../../bench/postgres-cpu.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// The bench's load step reports, beside the server's own CPU per request, PostgreSQL's: the CPU
// its processes spent on the server's database during the run, divided by the requests. Here the
// "server" is this test process, answering each request with a query that costs PostgreSQL a
// little CPU, so both figures must come out above zero.

describe.skipIf(!databaseKinds.includes("postgres"))("bench load: CPU per request", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let server: Server;
  let postgres: PostgresCpu;
  let target: Target;
  beforeAll(async () => {
    database = await freshDatabase("postgres", { empty: true });
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    server = createServer((_request, response) => {
      pool
        .query("SELECT count(*) FROM generate_series(1, 20000)")
        .then(({ rows }) => response.end(JSON.stringify(rows)))
        .catch(() => {
          response.statusCode = 500;
          response.end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    postgres = await PostgresCpu.open(database.url as string);
    target = { name: "test", url: `http://127.0.0.1:${address.port}`, pid: process.pid, headers: {} };
  }, 60_000);
  afterAll(async () => {
    await postgres?.close();
    await new Promise((resolve) => server?.close(resolve));
    await pool?.end();
    await database?.drop();
  });

  it("reports PostgreSQL's CPU per request when the target names its database", async () => {
    const result = await load({ ...target, postgres }, () => ({ method: "GET", path: "/" }), ["k"], 2, 2);
    expect(result.failures).toBe(0);
    expect(result.requests).toBeGreaterThan(20);
    expect(result.cpuUsPerRequest).toBeGreaterThan(0);
    expect(result.postgresCpuUsPerRequest).toBeGreaterThan(0);
  }, 30_000);

  it("leaves it out when it does not", async () => {
    const result = await load(target, () => ({ method: "GET", path: "/" }), ["k"], 1, 2);
    expect(result.requests).toBeGreaterThan(0);
    expect(result).not.toHaveProperty("postgresCpuUsPerRequest");
  }, 30_000);
});

// autocannon's own histogram keeps whole milliseconds: a p99 of about a millisecond, held to 2× the
// baseline's, needs each answer's own time.
describe("bench load: latency", () => {
  let server: Server;
  let target: Target;
  beforeAll(async () => {
    server = createServer((_request, response) => response.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    target = { name: "test", url: `http://127.0.0.1:${address.port}`, pid: process.pid, headers: {} };
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it("reports p50 and p99 in fractions of a millisecond", async () => {
    const result = await load(target, () => ({ method: "GET", path: "/" }), ["k"], 1, 2);
    expect(result.requests).toBeGreaterThan(20);
    expect(result.p50Ms).toBeGreaterThan(0);
    expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
    expect(Number.isInteger(result.p50Ms) && Number.isInteger(result.p99Ms)).toBe(false);
  }, 30_000);
});
