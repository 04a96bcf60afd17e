import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CombinedStatements, runReads } from "../../src/core/combined-reads.ts";
import { type CompiledRead, runRead } from "../../src/core/read.ts";
import type { Executor, Statement } from "../../src/db/database.ts";
import { newUnitOfWork, withUnitOfWork } from "../../src/db/unit-of-work.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// core/combined-reads.ts: reads as one statement answer what each answers alone.

const rows = (values: string): CompiledRead => ({
  kind: "collection",
  inlineCount: false,
  // A `$1` inside a text and a quoted name is not a placeholder.
  statement: {
    text: `SELECT ($1::text || '$1')::text AS body FROM (SELECT 1 AS "x$1") AS q`,
    values: [values],
  },
});
const counted = (n: number): CompiledRead => ({
  kind: "count",
  inlineCount: false,
  statement: {
    text: "SELECT count(*)::int AS count FROM generate_series(1, $1::int) AS n WHERE n > $2::int",
    values: [n, 0],
  },
});
const withCount = (n: number): CompiledRead => ({
  kind: "collection",
  inlineCount: true,
  statement: {
    text: `SELECT (SELECT json_agg(n)::text FROM generate_series(1, $1::int) AS n) AS body, $1::int AS count`,
    values: [n],
  },
});
const none: CompiledRead = {
  kind: "collection",
  inlineCount: false,
  statement: { text: "SELECT '[1]'::text AS body WHERE $1::boolean", values: [false] },
};
// Fails on its own value: a division by zero.
const failing: CompiledRead = {
  kind: "count",
  inlineCount: false,
  statement: { text: "SELECT (1 / $1::int)::int AS count", values: [0] },
};

/** An executor that records the statements it runs. */
function recording(db: Executor): { db: Executor; statements: Statement[] } {
  const statements: Statement[] = [];
  return {
    statements,
    db: {
      query: <Row>(statement: Statement) => {
        statements.push(statement);
        return db.query<Row>(statement);
      },
      script: (sql) => db.script(sql),
    },
  };
}

describe("combined statements, without a database", () => {
  it("renumbers each read's parameters after the reads before it, and leaves quoted `$1`s alone", () => {
    const statement = new CombinedStatements().statementOf([rows("a"), counted(3), rows("b")]);
    expect(statement.values).toEqual(["a", 3, 0, "b"]);
    expect(statement.text).toContain(`($1::text || '$1')`);
    expect(statement.text).toContain("generate_series(1, $2::int) AS n WHERE n > $3::int");
    expect(statement.text).toContain(`($4::text || '$1')`);
  });

  it("runs a combination unnamed first, then as a named prepared statement, and keeps a bounded number", () => {
    const combined = new CombinedStatements(2);
    const reads = [rows("a"), counted(1)];
    expect(combined.statementOf(reads).prepare).toBe(false);
    const again = combined.statementOf([rows("c"), counted(2)]);
    expect(again.prepare).toMatch(/^fgc_/);
    expect(combined.statementOf(reads).prepare).toBe(again.prepare);
    for (let i = 0; i < 10; i++) combined.statementOf(Array.from({ length: i + 3 }, () => rows("x")));
    expect(combined.size).toBe(2);
  });

  it("refuses a read whose text does not name its values", () => {
    const wrong: CompiledRead = {
      ...rows("a"),
      statement: { text: "SELECT $2::text AS body", values: ["a"] },
    };
    expect(() => new CombinedStatements().statementOf([wrong, rows("b")])).toThrow(/binds 1 values/);
  });
});

describe.each(databaseKinds)("combined reads on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind, { empty: true });
  }, 60_000);
  afterAll(() => test?.drop());

  const alone = async (db: Executor, reads: readonly CompiledRead[]) =>
    Promise.all(reads.map((read) => runRead(db, read)));

  it("answers each read as it answers alone, in one statement; a read that returns no row is []", async () => {
    const reads = [rows("a"), counted(4), withCount(3), none, rows("b"), counted(0)];
    const { db, statements } = recording(test.db);
    const settled = await runReads(db, reads, new CombinedStatements());
    expect(statements).toHaveLength(1);
    expect(settled.map((one) => (one.status === "fulfilled" ? one.value : one.reason))).toEqual(
      await alone(test.db, reads),
    );
  });

  it("reads one statement with the same values once, and a single read runs its own statement", async () => {
    const { db, statements } = recording(test.db);
    const settled = await runReads(db, [counted(2), counted(2), counted(2)], new CombinedStatements());
    expect(statements.map((statement) => statement.text)).toEqual([counted(2).statement.text]);
    expect(settled.map((one) => one.status === "fulfilled" && one.value.count)).toEqual([2, 2, 2]);
  });

  it("splits more reads than a select list holds into several statements", async () => {
    const { db, statements } = recording(test.db);
    const reads = Array.from({ length: 2_100 }, (_, i) => counted(i));
    const settled = await runReads(db, reads, new CombinedStatements());
    expect(statements).toHaveLength(3);
    expect(settled.map((one) => one.status === "fulfilled" && one.value.count)).toEqual(
      reads.map((_, i) => i),
    );
  });

  it("a read's own database error is that read's; the others answer", async () => {
    const { db, statements } = recording(test.db);
    const settled = await runReads(db, [rows("a"), failing, counted(2)], new CombinedStatements());
    expect(settled.map((one) => one.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(settled[2]?.status === "fulfilled" && settled[2].value.count).toBe(2);
    // The combined statement, then each read alone.
    expect(statements).toHaveLength(4);
  });

  it("a client gone away is every read's error", async () => {
    const unit = newUnitOfWork();
    unit.abandoned = true;
    const settled = await withUnitOfWork(unit, () =>
      runReads(test.db, [rows("a"), counted(2)], new CombinedStatements()),
    );
    expect(settled.map((one) => one.status === "rejected" && (one.reason as Error).name)).toEqual([
      "QueryCancelled",
      "QueryCancelled",
    ]);
  });
});
