import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formatGraphQLBody } from "../support/core/graphql-cases.ts";
import {
  type CaseServer,
  formatBody,
  formatStatements,
  listCases,
  startCaseServer,
} from "../support/core/sql-cases.ts";
import {
  maskRunTimes,
  parseWriteGraphQL,
  parseWriteHttp,
  snapshotTables,
  tableContents,
  type WriteCase,
} from "../support/core/write-cases.ts";
import { databaseKinds } from "../support/databases.ts";

// Writes as data (cases/README.md): each cases/writes/<name>.http (OData) or <name>.graphql (a
// mutation) is sent to the real server on the fixture, then its `## after:` read is sent as the
// admin. Every statement the write ran, in order, its answer and the rows after must equal
// <name>.sql, <name>.json and <name>.after.json, on every database; then the fixture is put back.
// UPDATE_CASES=1 rewrites the three files from the first database's run instead.

const root = fileURLToPath(new URL("./cases/", import.meta.url));
const area = (name: string) => name.startsWith("writes/");
const cases = [
  ...listCases(root, ".http")
    .filter(area)
    .map((name) => ({ name, file: `${name}.http`, graphql: false })),
  ...listCases(root, ".graphql")
    .filter(area)
    .map((name) => ({ name, file: `${name}.graphql`, graphql: true })),
].sort((a, b) => a.name.localeCompare(b.name));
const rewrite = process.env.UPDATE_CASES === "1";

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
/** An empty expectation is no file: a write refused before anything ran has no .sql. */
const write = (file: string, text: string) =>
  text ? writeFileSync(file, text) : rmSync(file, { force: true });

describe.each(databaseKinds)("write cases on %s", (kind) => {
  let server: CaseServer;
  let restore: () => Promise<void>;
  let fixture: Record<string, string>;
  // Rows written from here on have created_at of this run: their answers show "<run time>".
  const since = new Date();
  beforeAll(async () => {
    server = await startCaseServer(kind);
    restore = await snapshotTables(server.db);
    fixture = await tableContents(server.db);
  }, 180_000);
  afterEach(() => restore());
  afterAll(() => server?.close());

  it("there are cases", () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)("$file", async ({ name, file, graphql }) => {
    const base = `${root}${name}`;
    const text = readFileSync(`${root}${file}`, "utf8");
    const writeCase: WriteCase = graphql ? parseWriteGraphQL(text, file) : parseWriteHttp(text, file);
    const reply = await server.send(writeCase.request);
    expect(reply.status, reply.body).toBe(writeCase.request.status);
    expect(reply.statements.length, "statements recorded vs x-sql-statements").toBe(reply.counted);
    const after = await server.send(writeCase.after);
    expect(after.status, after.body).toBe(200);
    const sql = formatStatements(reply.statements);
    const json = maskRunTimes(graphql ? formatGraphQLBody(reply.body) : formatBody(reply.body), since);
    const rows = maskRunTimes(formatBody(after.body), since);
    // The first database writes; the others are then checked against what it wrote.
    if (rewrite && kind === databaseKinds[0]) {
      write(`${base}.sql`, sql);
      write(`${base}.json`, json);
      write(`${base}.after.json`, rows);
      return;
    }
    expect(sql, `${name}.sql (UPDATE_CASES=1 rewrites it)`).toBe(read(`${base}.sql`));
    expect(json, `${name}.json (UPDATE_CASES=1 rewrites it)`).toBe(read(`${base}.json`));
    expect(rows, `${name}.after.json (UPDATE_CASES=1 rewrites it)`).toBe(read(`${base}.after.json`));
  });

  // Run last: each case's write was undone, whole, so no case depends on the ones before it.
  it("the fixture is as it was after every case", async () => {
    expect(await tableContents(server.db)).toEqual(fixture);
  });
});
