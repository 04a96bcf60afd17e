import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPostgres } from "../../src/db/postgres.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { type RunningServer, startServer } from "../support/processes.ts";

// Issue 16, "Done when": mixed load against a real `fleetgate serve` on PostgreSQL; the test
// database's backends are terminated twice (what a restart, a failover or a pooler recycle does).
// The server must never exit, answer 503 with Retry-After meanwhile, recover within a second of
// the database accepting connections again, and keep every write it acknowledged.

const PASSWORD = "fault-test-password";
const WORKERS = 4;
const OUTAGE_MS = 1_500;
const SETTLE_MS = 2_500;

interface Outcome {
  readonly kind: "read" | "write" | "graphql";
  readonly startedAt: number;
  readonly endedAt: number;
  readonly status: number;
  readonly retryAfter: string | null;
}

interface Outage {
  readonly terminatedAt: number;
  readonly acceptingAt: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(databaseKinds.includes("postgres"))(
  "fleetgate serve when PostgreSQL drops its connections",
  () => {
    let test: TestDatabase;
    let database: string;
    let admin: pg.Client;
    let server: RunningServer | undefined;
    beforeAll(async () => {
      test = await freshDatabase("postgres", { empty: true });
      await test.db.close();
      database = new URL(test.url as string).pathname.slice(1);
      admin = new pg.Client({ connectionString: inject("postgres")?.serverUrl });
      await admin.connect();
    });
    afterAll(async () => {
      if (server && server.child.exitCode === null) await server.stop();
      await admin?.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`).catch(() => {});
      await admin?.end();
      await test?.drop().catch(() => {});
    });

    /** Cuts every connection to the test database and refuses new ones until `restore`. */
    async function dropDatabase(): Promise<number> {
      await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [database],
      );
      return rows[0]?.n ?? 0;
    }
    const restore = () => admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);

    it("answers 503 with Retry-After during two outages, recovers by itself and loses no acknowledged write", {
      timeout: 120_000,
    }, async () => {
      server = await startServer({ DATABASE_URL: test.url as string, ADMIN_PASSWORD: PASSWORD });
      const base = server.url;

      const login = await fetch(`${base}/login_`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: PASSWORD }),
      });
      expect(login.status).toBe(200);
      const headers = { authorization: `Bearer ${await login.text()}`, "content-type": "application/json" };
      // The demo fleets, device types and devices, written beside the running server.
      const seeding = openPostgres({ url: test.url as string, poolSize: 1 });
      try {
        await seedDemo(seeding);
      } finally {
        await seeding.close();
      }
      const fleets = await fetch(`${base}/v6/application?$select=id&$top=1`, { headers });
      const fleet = (await fleets.json()).d[0].id as number;

      const outcomes: Outcome[] = [];
      const acknowledged: string[] = [];
      let written = 0;
      let running = true;
      const request = async (kind: Outcome["kind"], url: string, init: RequestInit = {}) => {
        const startedAt = Date.now();
        // No answer at all (the server died, or dropped the connection) is status 0.
        const response = await fetch(`${base}${url}`, { ...init, headers }).catch(() => undefined);
        await response?.arrayBuffer().catch(() => undefined);
        const status = response?.status ?? 0;
        outcomes.push({
          kind,
          startedAt,
          endedAt: Date.now(),
          status,
          retryAfter: response?.headers.get("retry-after") ?? null,
        });
        return { status };
      };
      const worker = async (n: number) => {
        for (let i = 0; running; i++) {
          let status: number;
          if (i % 3 === 0) {
            const tag = `w${n}-${written++}`;
            ({ status } = await request("write", "/v6/application_tag", {
              method: "POST",
              body: JSON.stringify({ application: fleet, tag_key: tag, value: "v" }),
            }));
            if (status === 201) acknowledged.push(tag);
          } else if (i % 3 === 1) {
            ({ status } = await request(
              "read",
              `/v6/application(${fleet})?$select=id&$expand=application_tag($top=5;$orderby=id desc)`,
            ));
          } else {
            ({ status } = await request("graphql", "/graphql", {
              method: "POST",
              body: JSON.stringify({ query: "{ applications(first: 2) { id appName } }" }),
            }));
          }
          // Bounded load: a short pause, and no faster while the database is away.
          await sleep(status === 503 || status === 0 ? 50 : 20);
        }
      };
      const workers = Array.from({ length: WORKERS }, (_, n) => worker(n));

      const outages: Outage[] = [];
      try {
        await sleep(SETTLE_MS);
        for (let round = 0; round < 2; round++) {
          const terminated = await dropDatabase();
          const terminatedAt = Date.now();
          expect(terminated).toBeGreaterThan(0);
          await sleep(OUTAGE_MS);
          await restore();
          outages.push({ terminatedAt, acceptingAt: Date.now() });
          await sleep(SETTLE_MS);
        }
      } finally {
        running = false;
        await Promise.all(workers);
      }

      // The server never exited and still answers.
      expect(server.child.exitCode).toBeNull();
      expect((await fetch(`${base}/ping`)).status).toBe(200);
      // Nothing but success and 503: no 500, no hang turned into an error.
      const statuses = new Set(outcomes.map((outcome) => outcome.status));
      expect([...statuses].sort()).toEqual([200, 201, 503]);
      for (const outcome of outcomes.filter((o) => o.status === 503)) expect(outcome.retryAfter).toBe("1");

      for (const { terminatedAt, acceptingAt } of outages) {
        // Every request sent while the database refused connections was a 503, for every surface.
        const during = outcomes.filter(
          (o) => o.startedAt > terminatedAt + 100 && o.endedAt < acceptingAt && o.startedAt < acceptingAt,
        );
        expect(during.length).toBeGreaterThan(0);
        expect(new Set(during.map((o) => o.status))).toEqual(new Set([503]));
        expect(new Set(during.map((o) => o.kind))).toEqual(new Set(["read", "write", "graphql"]));
        // Recovered within a second of the database accepting connections.
        const firstSuccess = outcomes
          .filter((o) => o.startedAt >= acceptingAt && o.status < 300)
          .reduce((first, o) => Math.min(first, o.endedAt), Number.POSITIVE_INFINITY);
        expect(firstSuccess - acceptingAt).toBeLessThan(1_000);
        // And stayed up: what ran in the settled half of the pause after it (ending before the next
        // outage could begin) all succeeded.
        const settled = outcomes.filter(
          (o) => o.startedAt > acceptingAt + 1_000 && o.endedAt < acceptingAt + SETTLE_MS,
        );
        expect(settled.length).toBeGreaterThan(0);
        expect(settled.filter((o) => o.status >= 300)).toEqual([]);
      }

      // Every write the server acknowledged is there.
      const check = new pg.Client({ connectionString: test.url });
      await check.connect();
      try {
        const { rows } = await check.query<{ tag_key: string }>(
          `SELECT "tag_key" FROM "application_tag" WHERE "application" = $1`,
          [fleet],
        );
        const stored = new Set(rows.map((row) => row.tag_key));
        expect(acknowledged.length).toBeGreaterThan(10);
        expect(acknowledged.filter((tag) => !stored.has(tag))).toEqual([]);
      } finally {
        await check.end();
      }
    });
  },
);
