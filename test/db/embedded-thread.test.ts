import { messages } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientErrorOf } from "../../src/core/client-errors.ts";
import { freshDatabase, type TestDatabase } from "../support/databases.ts";

// The embedded database runs on a thread of its own (src/db/embedded-thread.ts): what PGlite did on
// the server's thread must come back the same, and a long statement must not hold the server's.
describe("the embedded database on its own thread", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase("embedded");
  });
  afterAll(() => test.drop());

  const run = (text: string, values: unknown[] = []) => test.db.query({ text, values });

  it("leaves the server's thread free while a statement runs", async () => {
    // The longest the loop went without a turn while the statement ran: all of it when PGlite ran
    // on this thread (a histogram of the loop's delay records nothing when the loop never turns).
    let last = performance.now();
    let longest = 0;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    };
    const ticking = setInterval(tick, 5);
    const started = performance.now();
    await run("SELECT pg_sleep(0.6)");
    const elapsed = performance.now() - started;
    tick();
    clearInterval(ticking);
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(longest).toBeLessThan(elapsed / 2);
  });

  it("raises PostgreSQL's errors with their fields, which the error table reads", async () => {
    await run("CREATE TABLE thread_probe (id int PRIMARY KEY, name text NOT NULL)");
    await run("INSERT INTO thread_probe VALUES (1, 'a')");
    const error = await run("INSERT INTO thread_probe VALUES (1, 'b')").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({
      code: "23505",
      constraint: "thread_probe_pkey",
      detail: "Key (id)=(1) already exists.",
      table: "thread_probe",
    });
    expect(clientErrorOf(error)).toMatchObject({ status: 409 });
    const syntax = await run("SELEC 1").catch((caught: unknown) => caught);
    expect(syntax).toMatchObject({ code: "42601" });
  });

  it("keeps values' types across the thread: dates, numbers, JSON, arrays, bytes", async () => {
    const [row] = await run(
      `SELECT $1::timestamptz AS at, 42::int8 AS big, 1.5::float8 AS real, '{"a":[1,2]}'::jsonb AS doc,
              ARRAY['x','y'] AS list, '\\x0102'::bytea AS bytes, NULL::text AS nothing`,
      [new Date("2026-11-29T12:00:00Z")],
    );
    expect(row).toEqual({
      at: new Date("2026-11-29T12:00:00Z"),
      big: 42,
      real: 1.5,
      doc: { a: [1, 2] },
      list: ["x", "y"],
      bytes: new Uint8Array([1, 2]),
      nothing: null,
    });
  });

  it("commits a transaction whose work resolves, rolls back one that throws, and keeps others out meanwhile", async () => {
    await run("CREATE TABLE thread_tx (n int)");
    await test.db.transaction(async (tx) => {
      await tx.query({ text: "INSERT INTO thread_tx VALUES (1)", values: [] });
    });
    await expect(
      test.db.transaction(async (tx) => {
        await tx.query({ text: "INSERT INTO thread_tx VALUES (2)", values: [] });
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    // A statement sent while a transaction is open runs after it ends, and sees it committed.
    let outside: Promise<unknown> | undefined;
    await test.db.transaction(async (tx) => {
      await tx.query({ text: "INSERT INTO thread_tx VALUES (3)", values: [] });
      outside = run("SELECT array_agg(n ORDER BY n) AS ns FROM thread_tx");
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.query({ text: "INSERT INTO thread_tx VALUES (4)", values: [] });
    });
    expect(await outside).toEqual([{ ns: [1, 3, 4] }]);
    // A failed statement inside rolls the whole transaction back.
    await expect(
      test.db.transaction(async (tx) => {
        await tx.query({ text: "INSERT INTO thread_tx VALUES (5)", values: [] });
        await tx.query({ text: "INSERT INTO thread_tx VALUES ('five')", values: [] });
      }),
    ).rejects.toMatchObject({ code: "22P02" });
    expect(await run("SELECT count(*)::int AS n FROM thread_tx")).toEqual([{ n: 3 }]);
  });

  it("delivers a committed NOTIFY to its listener, and nothing after it stops", async () => {
    const heard: string[] = [];
    const listen = test.db.listen;
    if (!listen) throw new Error("the embedded database listens");
    const stop = await listen("thread_probe_channel", (payload) => heard.push(payload));
    await test.db.transaction(async (tx) => {
      await tx.query({ text: "SELECT pg_notify('thread_probe_channel', 'inside')", values: [] });
      expect(heard).toEqual([]);
    });
    await run("SELECT pg_notify('thread_probe_channel', 'outside')");
    await expect.poll(() => heard).toEqual(["inside", "outside"]);
    await stop();
    await run("SELECT pg_notify('thread_probe_channel', 'after')");
    await run("SELECT 1");
    expect(heard).toEqual(["inside", "outside"]);
  });

  it("serves Prisma's adapter: typed reads with its own parsers, writes, and its transactions", async () => {
    const prisma = test.db.prisma;
    const [row] = await prisma.$queryRaw<{ at: Date; big: bigint; n: number; doc: unknown }[]>`
      SELECT '2026-11-29 12:00:00+00'::timestamptz AS at, 9007199254740993::int8 AS big,
             ${7}::int AS n, '{"k":"v"}'::jsonb AS doc`;
    expect(row).toEqual({
      at: new Date("2026-11-29T12:00:00Z"),
      big: 9007199254740993n,
      n: 7,
      doc: { k: "v" },
    });
    const actor = await prisma.actor.create({ data: {} });
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.actor.delete({ where: { id: actor.id } });
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(await prisma.actor.findUnique({ where: { id: actor.id } })).toEqual(actor);
    await test.db.releasePrisma?.();
  });
});
