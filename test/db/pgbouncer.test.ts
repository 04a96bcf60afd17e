import { createServer, type Server } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import type { Database } from "../../src/db/database.ts";
import { ConnectionFailed, QueryCancelled, StatementTimeout } from "../../src/db/failures.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { withCancellation } from "../../src/db/unit-of-work.ts";
import { freshDatabase, type TestDatabase } from "../support/databases.ts";
import { type PgBouncer, pgbouncerBinary, startPgBouncer } from "../support/db/pgbouncer.ts";
import { subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { type RunningServer, startServer } from "../support/processes.ts";

// Issue 29, item 3: fleetgate behind PgBouncer in transaction pooling mode (Debian's 1.18, which
// keeps no prepared statements across transactions). A real pgbouncer process in front of a fresh
// database, and a real `fleetgate serve` with DATABASE_URL through it and
// DATABASE_PREPARED_STATEMENTS=false, and DATABASE_DIRECT_URL straight to PostgreSQL for LISTEN and
// the job queue. The server migrates the empty database through the pooler on its first start. The
// database's own time zone is not UTC, so a time zone lost between server connections would show.

const postgres = inject("postgres");
const binary = pgbouncerBinary();
if (postgres && !binary) {
  // In CI the pooler is installed first (.ci/run): a missing one is a failure, not a skip.
  if (process.env.CI === "true") throw new Error("pgbouncer is not installed (apt-get install pgbouncer)");
  process.stderr.write("\n  PgBouncer tests skipped: no pgbouncer binary (apt-get install pgbouncer)\n\n");
}

const ADMIN_PASSWORD = "pooler-admin-password";
const KEY_SECRET = "pooler-test-supervisor-key-secret-0123456789";
const ZONE = "Asia/Kathmandu"; // UTC+05:45: every hour and minute differs from UTC's

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgres || !binary)("behind PgBouncer in transaction pooling mode", () => {
  let test: TestDatabase;
  let bouncer: PgBouncer;
  let server: RunningServer;
  let supervisor: Server;
  let token: string;

  async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const raw = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      raw,
      body: response.headers.get("content-type")?.includes("json") ? JSON.parse(raw) : raw,
    };
  }

  beforeAll(async () => {
    test = await freshDatabase("postgres", { empty: true });
    const dbname = new URL(test.url as string).pathname.slice(1);
    await test.db.script(`ALTER DATABASE "${dbname}" SET timezone = '${ZONE}'`);
    bouncer = await startPgBouncer(binary as string, postgres?.serverUrl as string, {
      // Fewer server connections than fleetgate's pool has clients: statements of one client
      // connection run on different server connections, and one server connection serves several.
      fleetgate: { dbname, poolSize: 2 },
      one: { dbname, poolSize: 1 },
    });
    server = await startServer({
      DATABASE_URL: bouncer.url("fleetgate"),
      DATABASE_DIRECT_URL: test.url as string,
      DATABASE_PREPARED_STATEMENTS: "false",
      DATABASE_POOL_SIZE: "6",
      ADMIN_PASSWORD,
      SUPERVISOR_KEY_SECRET: KEY_SECRET,
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
      // Shutdown is not under test here: a subscription its client aborted sometimes holds the
      // close for the whole grace (so with a direct DATABASE_URL too).
      SHUTDOWN_GRACE: "2",
    });
    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    token = await login.text();
    supervisor = createServer((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ path: request.url?.split("?")[0] }));
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (supervisor) await new Promise((resolve) => supervisor.close(resolve));
    await bouncer?.stop();
    await test?.drop();
  });

  /** A fleet of `count` devices, made through the API. */
  async function fleet(name: string, count: number): Promise<{ id: number; devices: number[] }> {
    const created = await send("POST", "/v6/application", { app_name: name, device_type: "raspberrypi4-64" });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.id as number;
    const devices: number[] = [];
    for (let n = 0; n < count; n++) {
      const device = await send("POST", "/v6/device", {
        belongs_to__application: id,
        device_name: `${name}-${n}`,
      });
      expect(device.status, device.raw).toBe(201);
      devices.push(device.body.id);
    }
    return { id, devices };
  }

  it("reads and writes over OData and GraphQL", async () => {
    const { id, devices } = await fleet("pooled", 3);
    const [first] = devices as [number];
    expect((await send("PATCH", `/v6/device(${first})`, { note: "one" })).status).toBe(200);
    // A bulk PATCH: its statements, rules and permission checks in one transaction.
    const bulk = await send("PATCH", `/v6/device?$filter=belongs_to__application eq ${id}`, { note: "bulk" });
    expect(bulk.status, bulk.raw).toBe(200);
    expect(bulk.headers.get("x-affected-rows")).toBe("3");
    // Many reads at once: the pool's six client connections share the pooler's two server ones.
    const reads = await Promise.all(
      Array.from({ length: 24 }, () =>
        send("GET", `/v6/application(${id})?$select=app_name&$expand=owns__device($select=note;$orderby=id)`),
      ),
    );
    for (const read of reads) {
      expect(read.status, read.raw).toBe(200);
      expect(read.body.d[0].owns__device).toEqual(devices.map(() => ({ note: "bulk" })));
    }
    // hour() is taken in the session's time zone: UTC on every server connection, not the database's.
    const created = (await send("GET", `/v6/device(${first})?$select=created_at`)).body.d[0].created_at;
    const hour = new Date(created).getUTCHours();
    const byHour = await send(
      "GET",
      `/v6/device/$count?$filter=id eq ${first} and hour(created_at) eq ${hour}`,
    );
    expect(byHour.body).toEqual({ d: 1 });

    const query = await send("POST", "/graphql", {
      query: `{ applications(where: {id: {eq: ${id}}}) { appName ownsDeviceCount ownsDevice { note } } }`,
    });
    expect(query.status, query.raw).toBe(200);
    expect(query.body).toEqual({
      data: {
        applications: [
          { appName: "pooled", ownsDeviceCount: 3, ownsDevice: devices.map(() => ({ note: "bulk" })) },
        ],
      },
    });
  });

  it("delivers a change to a subscription: LISTEN on the direct connection, NOTIFY through the pooler", async () => {
    const { id } = await fleet("watched", 0);
    const stream = await subscribe<{ fleetChanged: { appName: string } }>(
      server.url,
      token,
      `subscription { fleetChanged(where: {id: {eq: ${id}}}) { appName } }`,
    );
    try {
      const renamed = await send("PATCH", `/v6/application(${id})`, { app_name: "watched-renamed" });
      expect(renamed.status, renamed.raw).toBe(200);
      await stream.until((r) => r.data?.fleetChanged.appName === "watched-renamed", "the rename", 10_000);
    } finally {
      stream.close();
    }
  });

  it("runs a command job on the queue (pg-boss on the direct connection) and streams its progress", async () => {
    const { id, devices } = await fleet("commanded", 3);
    const port = (supervisor.address() as { port: number }).port;
    const box = new KeyBox(KEY_SECRET);
    for (const device of devices) {
      // A state report's fields, written directly: only where the device's supervisor listens matters.
      await test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = '17.0.0' WHERE "id" = $1::int4`,
        values: [device, port, box.seal(`key-${device}`)],
      });
    }
    const submitted = await send("POST", "/supervisor/v1/blink", { appId: id }, { prefer: "respond-async" });
    expect(submitted.status, submitted.raw).toBe(202);
    const job = submitted.body.id as number;
    const stream = await subscribe<{ commandJob: { status: string; okCount: number } }>(
      server.url,
      token,
      `subscription { commandJob(id: ${job}) { status okCount } }`,
    );
    try {
      const done = await stream.until((r) => r.data?.commandJob.status === "succeeded", `job ${job}`, 30_000);
      expect(done.data?.commandJob.okCount).toBe(3);
    } finally {
      stream.close();
    }
    const results = await send("GET", `/v6/command_job(${job})?$expand=command_result($select=status,body)`);
    expect(results.body.d[0].command_result).toEqual(
      devices.map(() => ({ status: "ok", body: { path: "/v1/blink" } })),
    );
  });

  it("keeps session connections off the pooler: only the request pool is PgBouncer's client", async () => {
    const admin = new pg.Client({ connectionString: bouncer.url("pgbouncer") });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ database: string; application_name: string }>("SHOW CLIENTS");
      const names = rows.filter((row) => row.database === "fleetgate").map((row) => row.application_name);
      expect(names.length).toBeGreaterThan(0);
      expect(names).not.toContain("fleetgate-listen");
      expect(names).not.toContain("fleetgate-jobs");
    } finally {
      await admin.end();
    }
  });

  describe("the database layer through the pooler", () => {
    const open: Database[] = [];
    const pooled = (options: { statementTimeoutMs?: number; writeTimeoutMs?: number } = {}) => {
      const db = openPostgres({
        url: bouncer.url("one"),
        poolSize: 2,
        preparedStatements: false,
        ...options,
      });
      open.push(db);
      return db;
    };
    afterAll(() => Promise.all(open.map((db) => db.close())));
    const sleepFor = (seconds: number) => ({ text: "SELECT pg_sleep($1::float8)", values: [seconds] });
    const zone = { text: "SELECT current_setting('TimeZone') AS zone", values: [] };

    it("keeps TimeZone per client, whichever server connection runs its statement", async () => {
      const db = pooled();
      const zones = await Promise.all(Array.from({ length: 8 }, () => db.query<{ zone: string }>(zone)));
      expect(zones.flat().map((row) => row.zone)).toEqual(Array(8).fill("UTC"));
      // Another client of the same server connection still has the database's zone.
      const other = new pg.Client({ connectionString: bouncer.url("one") });
      await other.connect();
      expect((await other.query(zone)).rows).toEqual([{ zone: ZONE }]);
      await other.end();
    });

    it("stops a read at its time-out with a cancel request, and the server connection is free again", async () => {
      const db = pooled({ statementTimeoutMs: 300 });
      const started = Date.now();
      await expect(db.query(sleepFor(10))).rejects.toBeInstanceOf(StatementTimeout);
      expect(Date.now() - started).toBeLessThan(3_000);
      // The pooler's only server connection answers at once: the statement stopped on the server.
      expect(await db.query({ text: "SELECT 1 AS one", values: [] })).toEqual([{ one: 1 }]);
    });

    it("stops a statement of a write transaction at SET LOCAL's time-out", async () => {
      const db = pooled({ writeTimeoutMs: 300 });
      await expect(db.transaction((tx) => tx.query(sleepFor(10)))).rejects.toBeInstanceOf(StatementTimeout);
      expect(await db.query({ text: "SHOW statement_timeout", values: [] })).toEqual([
        { statement_timeout: "0" },
      ]);
    });

    it("cancels the statement of a unit of work that was abandoned", async () => {
      const db = pooled({ statementTimeoutMs: 60_000 });
      const aborter = new AbortController();
      const started = Date.now();
      const running = withCancellation(aborter.signal, () => db.query(sleepFor(10)));
      await sleep(300);
      aborter.abort();
      await expect(running).rejects.toBeInstanceOf(QueryCancelled);
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it("breaks with the default settings, which assume a session", async () => {
      // Startup options (the session's TimeZone and statement_timeout) are refused outright…
      const db = openPostgres({ url: bouncer.url("one"), poolSize: 1 });
      open.push(db);
      const refused = await db.query({ text: "SELECT 1", values: [] }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConnectionFailed);
      expect(String((refused as Error).cause)).toMatch(/unsupported startup parameter: options/);
      // …and a named statement outlives its transaction on a server connection that other clients
      // share: the next client preparing the same name finds it taken.
      const clients = [0, 1].map(() => new pg.Client({ connectionString: bouncer.url("one") }));
      try {
        for (const client of clients) await client.connect();
        const [a, b] = clients as [pg.Client, pg.Client];
        await a.query({ name: "fg_shared", text: "SELECT 1" });
        await expect(b.query({ name: "fg_shared", text: "SELECT 1" })).rejects.toThrow(/already exists/);
      } finally {
        for (const client of clients) await client.end();
      }
    });
  });
});
