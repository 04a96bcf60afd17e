import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.ts";
import { QueryCancelled, StatementTimeout } from "../../src/db/failures.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { withCancellation } from "../../src/db/unit-of-work.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

const sleepQuery = (seconds: number) => ({ text: "SELECT pg_sleep($1::float8)", values: [seconds] });

describe.each(databaseKinds)("a unit of work that was abandoned, on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  });
  afterAll(() => test.drop());

  it("sends no statement once its signal has aborted, in or out of a transaction", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      withCancellation(controller.signal, () => test.db.query({ text: "SELECT 1", values: [] })),
    ).rejects.toBeInstanceOf(QueryCancelled);
    await expect(
      withCancellation(controller.signal, () =>
        test.db.transaction((tx) => tx.query({ text: "SELECT 1", values: [] })),
      ),
    ).rejects.toBeInstanceOf(QueryCancelled);
    // The database itself is unharmed.
    expect(await test.db.query({ text: "SELECT 1 AS one", values: [] })).toEqual([{ one: 1 }]);
  });
});

describe.runIf(databaseKinds.includes("postgres"))("statements on PostgreSQL", () => {
  let test: TestDatabase;
  let admin: pg.Client;
  let database: string;
  // One connection: whatever is cancelled must give it back for the next caller to run at all.
  let single: Database;
  beforeAll(async () => {
    test = await freshDatabase("postgres");
    database = new URL(test.url as string).pathname.slice(1);
    single = openPostgres({ url: test.url as string, poolSize: 1, statementTimeoutMs: 60_000 });
    admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await single.close();
    await test.drop();
  });

  const sleeping = async () => {
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()`,
      [database],
    );
    return rows[0]?.n ?? 0;
  };

  const until = async (condition: () => Promise<boolean>, withinMs: number) => {
    const deadline = Date.now() + withinMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it("cancels the running statement when its signal aborts, and the connection serves the next caller", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const slow = withCancellation(controller.signal, () => single.query(sleepQuery(30)));
    slow.catch(() => {});
    await until(async () => (await sleeping()) === 1, 10_000);
    controller.abort();
    await expect(slow).rejects.toBeInstanceOf(QueryCancelled);
    expect(await sleeping()).toBe(0);
    // The only connection is back in the pool and clean.
    expect(await single.query({ text: "SELECT 2 AS two", values: [] })).toEqual([{ two: 2 }]);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("cancels a statement inside a transaction and rolls the transaction back", async () => {
    await single.query({ text: "CREATE TABLE IF NOT EXISTS cancel_probe (n int)", values: [] });
    const controller = new AbortController();
    const work = withCancellation(controller.signal, () =>
      single.transaction(async (tx) => {
        await tx.query({ text: "INSERT INTO cancel_probe VALUES (1)", values: [] });
        await tx.query(sleepQuery(30));
      }),
    );
    work.catch(() => {});
    await until(async () => (await sleeping()) === 1, 10_000);
    controller.abort();
    await expect(work).rejects.toBeInstanceOf(QueryCancelled);
    expect(await single.query({ text: "SELECT count(*)::int AS n FROM cancel_probe", values: [] })).toEqual([
      { n: 0 },
    ]);
  });

  it("stops a statement at its time-out and says which time-out it was", async () => {
    const quick = openPostgres({ url: test.url as string, poolSize: 1, statementTimeoutMs: 200 });
    try {
      const error = await quick.query(sleepQuery(5)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StatementTimeout);
      expect(error).toMatchObject({ scope: "statement", limitMs: 200 });
      expect(await quick.query({ text: "SELECT 3 AS three", values: [] })).toEqual([{ three: 3 }]);
    } finally {
      await quick.close();
    }
  });

  it("gives a write transaction its own time-out", async () => {
    const writes = openPostgres({
      url: test.url as string,
      poolSize: 1,
      statementTimeoutMs: 60_000,
      writeTimeoutMs: 200,
    });
    try {
      const error = await writes
        .transaction((tx) => tx.query(sleepQuery(5)))
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ scope: "write", limitMs: 200 });
      // Outside the transaction the connection has the statement time-out again.
      expect(await writes.query({ text: "SHOW statement_timeout", values: [] })).toEqual([
        { statement_timeout: "1min" },
      ]);
    } finally {
      await writes.close();
    }
  });

  it("survives its connection being terminated between two statements of a transaction", async () => {
    const pid = await single.transaction(async (tx) => {
      const [row] = await tx.query<{ pid: number }>({ text: "SELECT pg_backend_pid() AS pid", values: [] });
      return row?.pid;
    });
    const error = await single
      .transaction(async (tx) => {
        await tx.query({ text: "SELECT 1", values: [] });
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        // The backend's goodbye arrives while no statement is running: an 'error' event.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query({ text: "SELECT 1", values: [] });
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    // The broken connection was discarded: the next caller gets a new one.
    const [row] = await single.query<{ pid: number }>({ text: "SELECT pg_backend_pid() AS pid", values: [] });
    expect(row?.pid).not.toBe(pid);
  });
});
