import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/database.ts";
import { openPostgres, type PostgresOptions } from "../../src/db/postgres.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 16: one depth of the expansion cycle over a big fleet builds fleet² device objects, and
// a client that gave up on it kept its statement, and its connection, for minutes.
const CYCLE =
  "/v6/device?$select=id&$expand=belongs_to__application($select=id;$expand=owns__device($select=id,device_name))";
const BIG_FLEET = 2_000;

/** A fleet of BIG_FLEET devices, written in one statement (a fixture this size through the API takes minutes). */
async function addBigFleet(db: Database): Promise<void> {
  const [fleet] = await db.query<{ id: number; device_type: number }>({
    text: `SELECT "id", "is_for__device_type" AS device_type FROM "application" ORDER BY "id" LIMIT 1`,
    values: [],
  });
  if (!fleet) throw new Error("the demo seed made no fleet");
  await db.query({
    text: `WITH actors AS (
             INSERT INTO "actor" ("id") SELECT nextval(pg_get_serial_sequence('"actor"', 'id'))
               FROM generate_series(1, $1::int4) RETURNING "id")
           INSERT INTO "device" ("belongs_to__application", "actor", "device_name", "is_of__device_type", "uuid")
           SELECT $2::int4, "id", 'bulk-' || "id", $3::int4, md5('bulk-' || "id") FROM actors`,
    values: [BIG_FLEET, fleet.id, fleet.device_type],
  });
}

interface Served {
  readonly url: string;
  readonly authorization: string;
  close(): Promise<void>;
}

/** The real server on `test`'s database, through a pool of its own with these options. */
async function serve(test: TestDatabase, options: Omit<PostgresOptions, "url">): Promise<Served> {
  const db = openPostgres({ url: test.url as string, ...options });
  const app = await buildServer({
    db,
    model: buildModel(),
    config: loadConfig({ LOG_LEVEL: "silent" }),
    logger: createLogger("silent"),
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const [admin] = await db.query<{ actor: number }>({
    text: `SELECT "actor" FROM "user" WHERE "is_admin" ORDER BY "id" LIMIT 1`,
    values: [],
  });
  if (!admin) throw new Error("the demo seed made no admin");
  const key = await createApiKey(db, { actor: admin.actor, name: "abandoned-requests test" });
  return {
    url,
    authorization: `Bearer ${key}`,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

describe.runIf(databaseKinds.includes("postgres"))(
  "requests abandoned by their clients, on PostgreSQL",
  () => {
    let test: TestDatabase;
    let monitor: pg.Client;
    let database: string;
    beforeAll(async () => {
      test = await freshDatabase("postgres");
      await seedDemo(test.db);
      await test.db.query({
        text: `UPDATE "user" SET "is_admin" = true WHERE "username" = 'demo'`,
        values: [],
      });
      await addBigFleet(test.db);
      database = new URL(test.url as string).pathname.slice(1);
      monitor = new pg.Client({ connectionString: test.url });
      await monitor.connect();
    }, 120_000);
    afterAll(async () => {
      await monitor?.end();
      await test?.drop();
    });

    /** How many statements of the cycle the server runs right now. */
    const running = async () => {
      const { rows } = await monitor.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND state = 'active' AND query LIKE '%json_agg%' AND pid <> pg_backend_pid()`,
        [database],
      );
      return rows[0]?.n ?? 0;
    };
    const until = async (condition: () => Promise<boolean>, withinMs: number, what: string) => {
      const deadline = Date.now() + withinMs;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };

    it("cancels the statement of a client that went away, and the pool serves the next caller", {
      timeout: 120_000,
    }, async () => {
      // Two connections, both taken by abandoned cycles; no time-out would stop them for a minute.
      const server = await serve(test, { poolSize: 2, statementTimeoutMs: 60_000 });
      try {
        const headers = { authorization: server.authorization };
        const clients = [new AbortController(), new AbortController()];
        const abandoned = clients.map((client) =>
          fetch(`${server.url}${CYCLE}`, { headers, signal: client.signal }).catch(() => undefined),
        );
        await until(async () => (await running()) === 2, 20_000, "both cycles running");
        // Still running a moment later: the statement is slow enough to need cancelling.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(await running()).toBe(2);
        for (const client of clients) client.abort();
        await Promise.all(abandoned);
        const gone = Date.now();
        await until(async () => (await running()) === 0, 5_000, "cycles cancelled");
        expect(Date.now() - gone).toBeLessThan(5_000);
        // Both connections are back: a lookup by key is answered at once.
        const started = Date.now();
        const reply = await fetch(`${server.url}/v6/device?$top=1&$select=id`, { headers });
        expect(reply.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        await server.close();
      }
    });

    it("answers a read over its statement time-out with 504 naming the limit", {
      timeout: 60_000,
    }, async () => {
      const server = await serve(test, { poolSize: 2, statementTimeoutMs: 100 });
      try {
        const reply = await fetch(`${server.url}${CYCLE}`, {
          headers: { authorization: server.authorization },
        });
        expect(reply.status).toBe(504);
        expect(await reply.json()).toMatch(
          /^The request ran longer than the statement time-out of 100 ms \(DATABASE_STATEMENT_TIMEOUT_MS\)/,
        );
        // The backend reports itself idle a moment after the error reaches us.
        await until(async () => (await running()) === 0, 2_000, "the timed-out statement gone");
      } finally {
        await server.close();
      }
    });
  },
);
