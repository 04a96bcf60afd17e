import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type GraphQLReply, graphql } from "../support/graphql/graphql.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Errors and protections at /graphql: codes of bad input, the depth and cost limits, GRAPHQL_MAX_FIRST,
// the body size limit, introspection and GraphiQL switches, queries over GET.

const limits = {
  GRAPHQL_MAX_DEPTH: "3",
  GRAPHQL_MAX_COST: "200",
  GRAPHQL_MAX_FIRST: "50",
  GRAPHQL_MAX_BODY_BYTES: "2000",
  GRAPHQL_INTROSPECTION: "false",
  GRAPHQL_GRAPHIQL: "false",
};

function expectCode(reply: GraphQLReply, code: string, message?: RegExp): void {
  expect(reply.errors?.[0]?.extensions?.code, JSON.stringify(reply.errors)).toBe(code);
  if (message) expect(reply.errors?.[0]?.message).toMatch(message);
  expect(reply.statements, "nothing reaches the database").toBe(0);
}

describe.each(databaseKinds)("GraphQL protections on %s", (kind) => {
  /** Started with the defaults (introspection and GraphiQL on). */
  let open: TestServer;
  /** Started with every limit low and introspection and GraphiQL off. */
  let strict: TestServer;
  beforeAll(async () => {
    [open, strict] = await Promise.all([startTestServer(kind), startTestServer(kind, limits)]);
  }, 120_000);
  afterAll(() => Promise.all([open.close(), strict.close()]));

  describe("bad input is BAD_USER_INPUT", () => {
    it.each([
      ["first above GRAPHQL_MAX_FIRST", "{ devices(first: 1001) { id } }", /first/],
      ["a negative first", "{ devices(first: -1) { id } }", /first/],
      ["a negative offset", "{ devices(offset: -1) { id } }", /offset/],
      ["a negative offset in a relation", "{ applications { ownsDevice(offset: -5) { id } } }", /offset/],
      [
        "an orderBy item with two fields",
        "{ devices(orderBy: {id: ASC, deviceName: DESC}) { id } }",
        /orderBy\[0\]/,
      ],
      ["an orderBy item with none", "{ devices(orderBy: [{id: ASC}, {}]) { id } }", /orderBy\[1\]/],
      [
        "an orderBy item with two fields through a relation",
        "{ devices(orderBy: {belongsToApplication: {id: ASC, appName: ASC}}) { id } }",
        /orderBy/,
      ],
      ["an ordering comparison with null", "{ devices(where: {cpuTemp: {gt: null}}) { id } }", /null/],
      ["a relation condition of null", "{ devices(where: {belongsToApplication: null}) { id } }", /null/],
      ["no key", "{ device { id } }", /key/],
    ])("%s", async (_label, query, message) => {
      const reply = await graphql(open, query);
      expectCode(reply, "BAD_USER_INPUT", message);
      expect(reply.data?.[Object.keys(reply.data ?? {})[0] ?? ""] ?? null).toBeNull();
    });

    it("first above GRAPHQL_MAX_FIRST in a relation, from a variable or a literal", async () => {
      const query = "query($n: Int) { applications { ownsDevice(first: $n) { id } } }";
      expectCode(await graphql(open, query, { n: 1001 }), "BAD_USER_INPUT", /first/);
      expectCode(
        await graphql(open, "{ applications { ownsDevice(first: 1001) { id } } }"),
        "BAD_USER_INPUT",
        /first/,
      );
    });

    it.each([
      ["a String for an Int", "query($id: Int) { device(id: $id) { id } }", { id: "abc" }],
      [
        "a list of Strings for an Int list",
        "query($w: DeviceWhere) { devices(where: $w) { id } }",
        { w: { id: { in: ["a"] } } },
      ],
      [
        "an unknown where field",
        "query($w: DeviceWhere) { devices(where: $w) { id } }",
        { w: { nope: { eq: 1 } } },
      ],
      [
        "a DateTime that is no date",
        "query($w: DeviceWhere) { devices(where: $w) { id } }",
        { w: { createdAt: { gt: "yesterday" } } },
      ],
      [
        "an unknown order direction",
        "query($o: [DeviceOrderBy!]) { devices(orderBy: $o) { id } }",
        { o: [{ id: "UP" }] },
      ],
      ["a missing required variable", "query($on: Boolean!) { devices { id @include(if: $on) } }", {}],
    ])("wrong variable: %s", async (_label, query, variables) => {
      const reply = await graphql(open, query, variables);
      expectCode(reply, "BAD_USER_INPUT", /Variable/);
    });

    it("a DateTime literal that is no date", async () => {
      expectCode(
        await graphql(open, `{ devices(where: {createdAt: {gt: "soon"}}) { id } }`),
        "GRAPHQL_VALIDATION_FAILED",
      );
    });
  });

  describe("invalid documents are GRAPHQL_VALIDATION_FAILED", () => {
    it.each([
      ["an unknown field", "{ devices { nope } }"],
      ["an unknown root field", "{ nope { id } }"],
      ["an unknown argument", "{ devices(limit: 1) { id } }"],
      ["an unknown operator", "{ devices(where: {id: {like: 1}}) { id } }"],
      ["an operator the type does not have", "{ devices(where: {isOnline: {gt: true}}) { id } }"],
      ["text operators on an Int", `{ devices(where: {id: {contains: "1"}}) { id } }`],
      ["a relation without a selection", "{ devices { belongsToApplication } }"],
      ["a scalar with a selection", "{ devices { id { x } } }"],
      ["a wrong literal type", `{ devices(first: "ten") { id } }`],
      ["ordering by a to-many relation", "{ applications(orderBy: {ownsDevice: ASC}) { id } }"],
    ])("%s", async (_label, query) => {
      expectCode(await graphql(open, query), "GRAPHQL_VALIDATION_FAILED");
    });

    it("a syntax error", async () => {
      const reply = await graphql(open, "{ devices { id ");
      expect(reply.errors?.[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    });
  });

  describe("limits", () => {
    it("the depth limit: depth 3 passes, depth 4 is rejected before any statement", async () => {
      const ok = await graphql(strict, "{ devices { belongsToApplication { id } } }");
      expect(ok.errors).toBeUndefined();
      const deep = await graphql(strict, "{ devices { belongsToApplication { organization { id } } } }");
      expectCode(deep, "BAD_USER_INPUT", /^Query depth limit of 3 exceeded/);
      // fragments do not hide depth
      const hidden = await graphql(
        strict,
        "fragment O on Application { organization { id } } { devices { belongsToApplication { ...O } } }",
      );
      expectCode(hidden, "BAD_USER_INPUT", /depth/i);
    });

    it("the cost limit counts the rows a request could read, `first` from literals, variables and defaults", async () => {
      const query = "query($n: Int, $m: Int) { applications(first: $n) { ownsDevice(first: $m) { id } } }";
      // 4 + 4 × 49 = 200 rows: at the limit; one more device per fleet is over it.
      expect((await graphql(strict, query, { n: 4, m: 49 })).errors).toBeUndefined();
      expectCode(await graphql(strict, query, { n: 4, m: 50 }), "BAD_USER_INPUT", /up to 204 rows/);
      // A literal counts the same.
      const literal = "{ applications(first: 4) { ownsDevice(first: 50) { id } } }";
      expectCode(
        await graphql(strict, literal),
        "BAD_USER_INPUT",
        /up to 204 rows, more than the limit of 200/,
      );
      // Left out, a list counts GRAPHQL_MAX_FIRST: 50 + 50 × 50.
      expectCode(
        await graphql(strict, "{ applications { ownsDevice { id } } }"),
        "BAD_USER_INPUT",
        /up to 2550/,
      );
      // Root fields add up, aliases included: 3 × 50 is within, 5 × 50 is not.
      const copies = (n: number) =>
        `{ ${Array.from({ length: n }, (_, i) => `d${i}: devices(first: 50) { id }`).join(" ")} }`;
      expect((await graphql(strict, copies(4))).errors).toBeUndefined();
      // The whole operation is charged before its first field reads: over the limit, none runs.
      expectCode(await graphql(strict, copies(5)), "BAD_USER_INPUT", /up to 250 rows/);
      // A to-one relation and a count read no more rows than their parent.
      const single = "{ device(id: 1) { belongsToApplication { ownsDeviceCount id } } }";
      expect((await graphql(strict, single)).errors).toBeUndefined();
    });

    it("GRAPHQL_MAX_FIRST: 50 passes, 51 is rejected", async () => {
      const ok = await graphql(strict, "query($n: Int) { devices(first: $n) { id } }", { n: 50 });
      expect(ok.errors).toBeUndefined();
      const over = await graphql(strict, "query($n: Int) { devices(first: $n) { id } }", { n: 51 });
      expectCode(over, "BAD_USER_INPUT", /first must be between 0 and 50/);
    });

    it("a body above GRAPHQL_MAX_BODY_BYTES is a 413 in GraphQL's shape", async () => {
      const payload = JSON.stringify({ query: `{ devicesCount } # ${"x".repeat(2100)}` });
      const response = await strict.app.inject({
        method: "POST",
        url: "/graphql",
        headers: { "content-type": "application/json" },
        payload,
      });
      expect(response.statusCode).toBe(413);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      const body = JSON.parse(response.body) as {
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(body.errors[0]?.message).toMatch(/too large/i);
      expect(body.errors[0]?.extensions.code).toBeTypeOf("string");
      // just under the limit is fine
      const under = JSON.stringify({ query: `{ devicesCount } # ${"x".repeat(1900)}` });
      expect(Buffer.byteLength(under)).toBeLessThanOrEqual(2000);
      const ok = await strict.app.inject({
        method: "POST",
        url: "/graphql",
        headers: { "content-type": "application/json" },
        payload: under,
      });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(JSON.parse(ok.body)).toEqual({ data: { devicesCount: 0 } });
    });

    it("a body that is not JSON is a 400 in GraphQL's shape", async () => {
      const response = await open.app.inject({
        method: "POST",
        url: "/graphql",
        headers: { "content-type": "application/json" },
        payload: "{nope",
      });
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body).errors[0].extensions.code).toBe("BAD_USER_INPUT");
    });
  });

  describe("introspection and GraphiQL", () => {
    it("introspection answers when enabled, even without a credential", async () => {
      const reply = await graphql(open, "{ __schema { queryType { name } } }", undefined, {
        authorization: "",
      });
      expect(reply.data).toEqual({ __schema: { queryType: { name: "Query" } } });
    });

    it("GRAPHQL_INTROSPECTION=false rejects __schema and __type but not __typename", async () => {
      expectCode(
        await graphql(strict, "{ __schema { types { name } } }"),
        "GRAPHQL_VALIDATION_FAILED",
        /introspection/,
      );
      expectCode(
        await graphql(strict, `{ __type(name: "Device") { name } }`),
        "GRAPHQL_VALIDATION_FAILED",
        /introspection/,
      );
      const typename = await graphql(strict, "{ __typename devices(first: 1) { __typename } }");
      expect(typename.errors).toBeUndefined();
      expect(typename.data).toEqual({ __typename: "Query", devices: [] });
    });

    it("GraphiQL on GET /graphql with Accept: text/html when GRAPHQL_GRAPHIQL is true, not when false", async () => {
      const on = await open.app.inject({ method: "GET", url: "/graphql", headers: { accept: "text/html" } });
      expect(on.statusCode).toBe(200);
      expect(on.headers["content-type"]).toMatch(/^text\/html/);
      expect(on.body).toMatch(/graphiql/i);
      const off = await strict.app.inject({
        method: "GET",
        url: "/graphql",
        headers: { accept: "text/html" },
      });
      expect(off.headers["content-type"] ?? "").not.toMatch(/text\/html/);
      expect(off.body).not.toMatch(/graphiql/i);
    });

    it("GET /graphql?query=… runs a query, with variables", async () => {
      const query = encodeURIComponent("query($n: Int) { devices(first: $n) { id } devicesCount }");
      const variables = encodeURIComponent(JSON.stringify({ n: 1 }));
      const response = await open.app.inject({
        method: "GET",
        url: `/graphql?query=${query}&variables=${variables}`,
        headers: { accept: "application/json" },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ data: { devices: [], devicesCount: 0 } });
      // The query's two root fields: one statement.
      expect(response.headers["x-sql-statements"]).toBe("1");
    });

    it("GET /graphql does not run mutations", async () => {
      const query = encodeURIComponent("mutation { deleteDevices(where: {id: {eq: 1}}) { __typename } }");
      const response = await open.app.inject({ method: "GET", url: `/graphql?query=${query}` });
      expect(response.statusCode).toBe(405);
      expect(JSON.parse(response.body).errors[0].message).toMatch(/POST/);
    });
  });
});
