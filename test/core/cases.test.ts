import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CaseServer,
  formatBody,
  formatStatements,
  listCases,
  parseHttp,
  startCaseServer,
} from "../support/core/sql-cases.ts";
import { databaseKinds } from "../support/databases.ts";

// The compiler's tests as data (cases/README.md): each cases/<area>/<name>.http is sent to the real
// server on the fixture, and what it compiled to and answered must equal <name>.sql and <name>.json,
// on every database. UPDATE_CASES=1 rewrites those two files from the first database's run instead.

const root = fileURLToPath(new URL("./cases/", import.meta.url));
// writes/ holds requests too, with a runner of its own (write-cases.test.ts).
const cases = listCases(root).filter((name) => !name.startsWith("writes/"));
const rewrite = process.env.UPDATE_CASES === "1";

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
/** An empty expectation is no file: a request that ran no statement has no .sql. */
const write = (file: string, text: string) =>
  text ? writeFileSync(file, text) : rmSync(file, { force: true });

describe.each(databaseKinds)("SQL cases on %s", (kind) => {
  let server: CaseServer;
  beforeAll(async () => {
    server = await startCaseServer(kind);
  }, 180_000);
  afterAll(() => server?.close());

  it.each(cases)("%s", async (name) => {
    const base = `${root}${name}`;
    const request = parseHttp(readFileSync(`${base}.http`, "utf8"));
    const reply = await server.send(request);
    expect(reply.status, reply.body).toBe(request.status);
    expect(reply.statements.length, "statements recorded vs x-sql-statements").toBe(reply.counted);
    const sql = formatStatements(reply.statements);
    const json = formatBody(reply.body);
    // The first database writes; the others are then checked against what it wrote.
    if (rewrite && kind === databaseKinds[0]) {
      write(`${base}.sql`, sql);
      write(`${base}.json`, json);
      return;
    }
    expect(sql, `${name}.sql (UPDATE_CASES=1 rewrites it)`).toBe(read(`${base}.sql`));
    expect(json, `${name}.json (UPDATE_CASES=1 rewrites it)`).toBe(read(`${base}.json`));
  });
});
