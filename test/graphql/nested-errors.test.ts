import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 47: an error in a nested field's argument carries that field's path (its response keys,
// aliases included, list indices left out) and location, not its root field's.

interface Case {
  readonly query: string;
  readonly variables?: Record<string, unknown>;
  readonly path: readonly string[];
  /** The text at the error's location (a root field's own error: as before, not checked). */
  readonly at?: string;
}

const cases: readonly Case[] = [
  {
    query: "{ applications(first: 2) { id ownsDevice(first: -1) { id } } }",
    path: ["applications", "ownsDevice"],
    at: "ownsDevice(first: -1)",
  },
  {
    query: "{ apps: applications { id d: ownsDevice(offset: -1) { id } } }",
    path: ["apps", "d"],
    at: "d: ownsDevice",
  },
  {
    query:
      "{ devices(first: 1) { belongsToApplication { ownsDevice(orderBy: [{deviceName: ASC, id: ASC}]) { id } } } }",
    path: ["devices", "belongsToApplication", "ownsDevice"],
    at: "ownsDevice(orderBy",
  },
  {
    query: "query($n: Int) { organizations { application(first: 1) { ownsDevice(first: $n) { id } } } }",
    variables: { n: -5 },
    path: ["organizations", "application", "ownsDevice"],
    at: "ownsDevice(first: $n)",
  },
  {
    query: "{ applications(first: -1) { id ownsDevice { id } } }",
    path: ["applications"],
  },
];

describe.each(databaseKinds)("errors of nested arguments on %s", (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
  }, 60_000);

  afterAll(() => server?.close());

  it.each(cases)("$path", async ({ query, variables, path, at }) => {
    const reply = await graphql(server, query, variables);
    expect(reply.status).toBe(200);
    expect(reply.errors).toHaveLength(1);
    const error = reply.errors?.[0] as { path?: unknown; locations?: { line: number; column: number }[] };
    expect(reply.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(error.path).toEqual(path);
    if (at === undefined) return;
    const location = error.locations?.[0];
    expect(query.slice((location?.column ?? 0) - 1)).toMatch(
      new RegExp(`^${at.replace(/[()$[\]{}]/g, "\\$&")}`),
    );
  });
});
