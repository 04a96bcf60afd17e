import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attacks, measureAttack, nestedAny, nestedSome } from "../../bench/hostile-documents.ts";
import { MAX_LAMBDA_DEPTH } from "../../src/core/plan-expr.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 45, item 1: `any` nested in `any` 30 deep (a 2 KB URL) took PostgreSQL past its statement
// time-out (504) and held the embedded database's thread as long (a 500); 8 deep held it 1–2 s.
// A filter may nest any()/all()/$count($filter=…) MAX_LAMBDA_DEPTH deep, on every surface: the
// planner refuses a deeper one before any SQL exists. The clients nest three at most.

const refusal = `This filter nests any()/all() or $count($filter=…) (GraphQL: some, every, none) more than ${MAX_LAMBDA_DEPTH} levels deep, the limit of one filter`;

describe.each(databaseKinds)("nested lambdas on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  }, 120_000);
  afterAll(() => server.close());

  it.each([
    ["odataNestedAny8", attacks.odataNestedAny8],
    ["odataNestedAny30", attacks.odataNestedAny30],
  ] as const)("%s is a 400 that names the limit, anonymous or not, at once", async (_name, attack) => {
    for (const authorization of [undefined, `Bearer ${server.adminKey}`]) {
      const figures = await measureAttack(server.url, attack, {
        rounds: 2,
        ...(authorization ? { authorization } : {}),
      });
      for (const answer of figures.answers) {
        expect(answer.status, answer.body.slice(0, 300)).toBe(400);
        expect(JSON.parse(answer.body)).toBe(refusal);
        expect(answer.statements).toBe(0);
        expect(answer.ms).toBeLessThan(1_000);
      }
      expect(figures.maxBlockMs).toBeLessThan(1_000);
    }
  });

  it("GraphQL's some nested 8 and 30 deep is BAD_USER_INPUT naming the limit", async () => {
    const post = (query: string) =>
      fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${server.adminKey}` },
        body: JSON.stringify({ query }),
      });
    // The first GraphQL request of a server builds what every later one shares.
    await (await post("{ applications(first: 1) { id } }")).text();
    for (const depth of [8, 30]) {
      const start = performance.now();
      const response = await post(`{ applications(where: ${nestedSome(depth, 1)}) { id } }`);
      const body = (await response.json()) as {
        data?: unknown;
        errors?: { message: string; extensions?: { code?: string } }[];
      };
      expect(performance.now() - start).toBeLessThan(1_000);
      expect(body.errors?.[0]?.message, JSON.stringify(body)).toBe(refusal);
      expect(body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(response.headers.get("x-sql-statements")).toBe("0");
    }
  });

  it("nesting up to the limit still runs, on both surfaces, and $count($filter) counts as a level", async () => {
    const get = (url: string) => server.app.inject({ method: "GET", url: url.replaceAll(" ", "%20") });
    for (let depth = 1; depth <= MAX_LAMBDA_DEPTH; depth++) {
      const response = await get(nestedAny(depth, 7));
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ d: [] });
      const graphql = await server.app.inject({
        method: "POST",
        url: "/graphql",
        payload: { query: `{ applications(where: ${nestedSome(depth, 7)}) { id } }` },
      });
      expect(graphql.json(), graphql.body).toEqual({ data: { applications: [] } });
    }
    // balena-sdk's three levels, and one more through a count.
    const sdk = await get(
      "/v6/application?$filter=owns__device/any(d:d/device_tag/any(t:t/tag_key eq 'a')) and owns__device/any(d:d/belongs_to__application/owns__device/any(e:e/device_tag/$count($filter=value eq 'b') gt 0))",
    );
    expect(sdk.statusCode, sdk.body).toBe(200);
    const counted = `owns__device/$count($filter=${"belongs_to__application/owns__device/$count($filter=".repeat(MAX_LAMBDA_DEPTH)}id eq 1${") gt 0".repeat(MAX_LAMBDA_DEPTH)}) gt 0`;
    const deeper = await get(`/v6/application?$filter=${counted}`);
    expect(deeper.statusCode, deeper.body).toBe(400);
    expect(JSON.parse(deeper.body)).toBe(refusal);
  });

  it("a bulk PATCH's filter is held to the same limit", async () => {
    const response = await server.app.inject({
      method: "PATCH",
      url: nestedAny(MAX_LAMBDA_DEPTH + 1, 1).replaceAll(" ", "%20"),
      payload: { app_name: "renamed-fleet" },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(JSON.parse(response.body)).toBe(refusal);
  });
});
