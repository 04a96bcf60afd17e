import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatGraphQLBody,
  graphqlRequest,
  operationsAnswered,
  parseGraphQLCase,
} from "../support/core/graphql-cases.ts";
import { type CaseServer, formatStatements, listCases, startCaseServer } from "../support/core/sql-cases.ts";
import { databaseKinds } from "../support/databases.ts";

// GraphQL reads as data (cases/README.md): each cases/graphql/<name>.graphql is posted to the real
// server on the fixture as its caller, and the statements it ran and its answer must equal
// <name>.sql and <name>.json, on every database. What answered it (`## answered by:`, counted by
// fleetgate_graphql_operations_total) is checked too: an operation the database answers runs exactly
// one statement (src/graphql/execution/answer.ts). UPDATE_CASES=1 rewrites the two files from the first
// database's run instead.

const root = fileURLToPath(new URL("./cases/", import.meta.url));
const cases = listCases(root, ".graphql").filter((name) => name.startsWith("graphql/"));
const rewrite = process.env.UPDATE_CASES === "1";

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");
/** An empty expectation is no file: an operation that ran no statement has no .sql. */
const write = (file: string, text: string) =>
  text ? writeFileSync(file, text) : rmSync(file, { force: true });

describe.each(databaseKinds)("GraphQL cases on %s", (kind) => {
  let server: CaseServer;
  beforeAll(async () => {
    server = await startCaseServer(kind);
  }, 180_000);
  afterAll(() => server?.close());

  it("there are cases", () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)("%s", async (name) => {
    const base = `${root}${name}`;
    const graphqlCase = parseGraphQLCase(readFileSync(`${base}.graphql`, "utf8"));
    expect(
      graphqlCase.answeredBy,
      `${name}.graphql needs '## answered by: database|executor|none'`,
    ).toBeDefined();
    const before = await operationsAnswered(server);
    const reply = await server.send(graphqlRequest(graphqlCase));
    const after = await operationsAnswered(server);
    expect(reply.status, reply.body).toBe(graphqlCase.status);
    expect(reply.statements.length, "statements recorded vs x-sql-statements").toBe(reply.counted);
    const counted = {
      database: after.database - before.database,
      executor: after.executor - before.executor,
    };
    const answeredBy = counted.database ? "database" : counted.executor ? "executor" : "none";
    expect(counted.database + counted.executor, "operations counted").toBeLessThanOrEqual(1);
    expect(answeredBy, "## answered by").toBe(graphqlCase.answeredBy);
    // The rule of issue 28: an operation the database answers whole is one statement.
    if (answeredBy === "database") expect(reply.statements.length, "statements of the operation").toBe(1);
    const sql = formatStatements(reply.statements);
    const json = formatGraphQLBody(reply.body);
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
