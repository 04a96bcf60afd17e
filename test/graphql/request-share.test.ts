import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFixture } from "../support/core/read-fixture.ts";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 27, item 8: a GraphQL request's cost is its whole operation's. Root fields, their aliases
// and fragments on the root type add up with the lists below them, and an operation over the limit
// is refused before any of its fields reads.

const aliases = (n: number, field: string) =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ")} }`;

describe.each(databaseKinds)("a GraphQL request's cost is its operation's, on %s", (kind) => {
  /** GRAPHQL_MAX_COST 200, GRAPHQL_MAX_FIRST 50. */
  let strict: TestServer;
  /** The defaults, on the read fixture (40 devices). */
  let open: TestServer;
  beforeAll(async () => {
    [strict, open] = await Promise.all([
      startTestServer(kind, { GRAPHQL_MAX_COST: "200", GRAPHQL_MAX_FIRST: "50" }),
      startTestServer(kind),
    ]);
    await buildFixture(open.test.db);
  }, 120_000);
  afterAll(() => Promise.all([strict?.close(), open?.close()]));

  it("aliases of one list add up, and one over the limit runs no statement at all", async () => {
    const within = await graphql(strict, aliases(4, "devices(first: 50) { id }"));
    expect(within.errors).toBeUndefined();
    expect(within.statements).toBe(1);

    const over = await graphql(strict, aliases(5, "devices(first: 50) { id }"));
    expect(over.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(over.errors?.[0]?.message).toMatch(
      /^This query could read up to 250 rows, more than the limit of 200/,
    );
    expect(over.statements, "refused before the first field reads").toBe(0);
    expect(over.data ?? null).toBeNull();
  });

  it("single rows, nested lists and fragments on the root type count too", async () => {
    // 201 lookups of one row each: over 200; every field says why, none ran.
    const lookups = await graphql(strict, aliases(201, "device(id: 1) { id }"));
    expect(lookups.statements).toBe(0);
    expect(lookups.errors?.length).toBeGreaterThan(0);
    for (const error of lookups.errors ?? []) expect(error.message).toMatch(/up to 201 rows/);
    // 2 × (2 + 2 × 49) = 200 rows: at the limit. A fragment spread of the root type adds its fields.
    const nested = "applications(first: 2) { ownsDevice(first: 49) { id } }";
    const atLimit = `fragment F on Query { b: ${nested} } { a: ${nested} ...F }`;
    expect((await graphql(strict, atLimit)).errors).toBeUndefined();
    const overLimit = `fragment F on Query { b: ${nested} c: device(id: 1) { id } } { a: ${nested} ...F }`;
    const refused = await graphql(strict, overLimit);
    expect(refused.errors?.[0]?.message).toMatch(/up to 201 rows/);
    expect(refused.statements).toBe(0);
  });

  it("a mutation over the limit writes nothing", async () => {
    const create = (i: number) =>
      `c${i}: createApplication(input: {appName: "fleet${i}", deviceType: "raspberrypi4-64", organizationId: 1}) { id ownsDevice(first: 50) { id } }`;
    const reply = await graphql(strict, `mutation { ${[0, 1, 2, 3].map(create).join(" ")} }`);
    expect(reply.errors?.[0]?.message).toMatch(/up to 204 rows, more than the limit of 200/);
    expect(reply.statements).toBe(0);
    const count = await graphql<{ applicationsCount: number }>(strict, "{ applicationsCount }");
    expect(count.data?.applicationsCount).toBe(0);
  });

  it("a field's own mistake stays that field's error", async () => {
    const reply = await graphql(strict, "{ a: device(id: 1) { id } b: devices(first: 51) { id } }");
    expect(reply.errors?.map((error) => [error.path, error.message])).toEqual([
      [["b"], "first must be between 0 and 50"],
    ]);
  });

  it("300 aliases of devices(first: 1000) run beside other reads, and none of them fails", async () => {
    const big = graphql(open, aliases(300, "devices(first: 1000) { id deviceName }"));
    let done = false;
    const statuses: number[] = [];
    const beside = async () => {
      while (!done) {
        const [odata, query] = await Promise.all([
          open.app.inject({ method: "GET", url: "/v6/device?$top=5&$select=id" }),
          graphql(open, "{ applications(first: 5) { id ownsDeviceCount } }"),
        ]);
        statuses.push(odata.statusCode, query.status);
        expect(query.errors).toBeUndefined();
      }
    };
    const readers = [beside(), beside()];
    const reply = await big.finally(() => {
      done = true;
    });
    await Promise.all(readers);
    expect(reply.status).toBe(200);
    expect(reply.errors).toBeUndefined();
    expect(reply.statements).toBe(1);
    expect(Object.keys(reply.data ?? {})).toHaveLength(300);
    expect(reply.data?.a299).toHaveLength(40);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
