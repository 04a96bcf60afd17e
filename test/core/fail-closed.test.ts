import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Every node kind @balena/odata-parser's grammar can produce (see src/odata/parse/parse.ts), each either
// compiled exactly (and its result checked) or rejected with a 400 that names it. Nothing is dropped
// or widened: the classic failure is `not (id eq 1)` compiling to `1 = 1`, which would turn a bulk
// DELETE into "delete everything".
type Case = { kind: string; url: string } & (
  | { expect: "rejected"; message: RegExp }
  | { expect: "compiled"; ids: (all: number[]) => number[] }
);

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const only =
  (...wanted: number[]) =>
  () =>
    wanted;
const except =
  (...unwanted: number[]) =>
  (all: number[]) =>
    all.filter((id) => !unwanted.includes(id));

const cases: Case[] = [
  { kind: "eq", url: "id eq 3", expect: "compiled", ids: only(3) },
  { kind: "ne", url: "id ne 3", expect: "compiled", ids: except(3) },
  { kind: "gt", url: "id gt 57", expect: "compiled", ids: only(58, 59, 60) },
  { kind: "ge", url: "id ge 58", expect: "compiled", ids: only(58, 59, 60) },
  { kind: "lt", url: "id lt 3", expect: "compiled", ids: only(1, 2) },
  { kind: "le", url: "id le 2", expect: "compiled", ids: only(1, 2) },
  { kind: "and", url: "id gt 1 and id lt 4", expect: "compiled", ids: only(2, 3) },
  { kind: "or", url: "id eq 1 or id eq 4", expect: "compiled", ids: only(1, 4) },
  { kind: "add", url: "id add 1 eq 3", expect: "compiled", ids: only(2) },
  { kind: "sub", url: "id sub 1 eq 3", expect: "compiled", ids: only(4) },
  { kind: "mul", url: "id mul 2 eq 8", expect: "compiled", ids: only(4) },
  { kind: "div", url: "id div 10 eq 5", expect: "compiled", ids: () => ids(50, 59) },
  { kind: "mod", url: "id mod 20 eq 0", expect: "compiled", ids: only(20, 40, 60) },
  { kind: "not (group)", url: "not (id eq 1)", expect: "compiled", ids: except(1) },
  { kind: "not(group)", url: "not(id le 58)", expect: "compiled", ids: only(59, 60) },
  {
    kind: "not (value)",
    url: "not is_online",
    expect: "compiled",
    ids: (all) => all.filter((id) => (id - 1) % 4 === 0),
  },
  { kind: "eqany (in)", url: "id in (1, 5, 9)", expect: "compiled", ids: only(1, 5, 9) },
  { kind: "not in", url: "not (id in (1,2))", expect: "compiled", ids: except(1, 2) },
  { kind: "call", url: "startswith(device_name,'kiosks-0')", expect: "compiled", ids: () => ids(41, 49) },
  {
    kind: "path",
    url: "belongs_to__application/app_name eq 'kiosks'",
    expect: "compiled",
    ids: () => ids(41, 60),
  },
  { kind: "lambda any", url: "device_tag/any(t:t/value eq 'x')", expect: "compiled", ids: only() },
  {
    kind: "lambda all",
    url: "device_tag/all(t:t/value eq 'x') and id le 2",
    expect: "compiled",
    ids: only(1, 2),
  },
  { kind: "path $count", url: "device_tag/$count eq 0 and id le 2", expect: "compiled", ids: only(1, 2) },
  { kind: "bind number", url: "id eq 7", expect: "compiled", ids: only(7) },
  { kind: "bind text", url: "device_name eq 'kiosks-01'", expect: "compiled", ids: only(41) },
  { kind: "bind boolean", url: "is_online eq false and id le 5", expect: "compiled", ids: only(1, 5) },
  {
    kind: "bind datetime",
    url: "created_at gt datetime'2000-01-01T00:00:00Z' and id eq 2",
    expect: "compiled",
    ids: only(2),
  },
  { kind: "bind date", url: "created_at gt date'2000-01-01' and id eq 2", expect: "compiled", ids: only(2) },
  { kind: "bind alias", url: "id eq @a&@a=6", expect: "compiled", ids: only(6) },
  { kind: "null", url: "note eq null and id le 2", expect: "compiled", ids: only(2) },
  { kind: "bare boolean field", url: "is_online and id le 3", expect: "compiled", ids: only(2, 3) },
  {
    kind: "duration",
    url: "created_at gt duration'P1D'",
    expect: "rejected",
    message: /duration literals are not supported/,
  },
  {
    kind: "path method call",
    url: "device_tag/foo(1) eq 1",
    expect: "rejected",
    message: /Unknown function 'foo'/,
  },
  { kind: "keyed path", url: "device_tag(1)/value eq 'x'", expect: "rejected", message: /Keys inside paths/ },
  {
    kind: "unsupported function",
    url: "totalseconds(created_at) eq 1",
    expect: "rejected",
    message: /Function 'totalseconds'/,
  },
  { kind: "isof", url: "isof('Edm.String')", expect: "rejected", message: /Function 'isof'/ },
  { kind: "chained comparison", url: "id eq 1 eq true", expect: "rejected", message: /Chained 'eq'/ },
  { kind: "parenthesised comparison", url: "(id eq 1) eq true", expect: "compiled", ids: only(1) },
  { kind: "in after arithmetic", url: "id div 2 in (1)", expect: "compiled", ids: only(2, 3) },
  { kind: "in with a path", url: "id in (actor, 1)", expect: "rejected", message: /literal values only/ },
  { kind: "non-boolean filter", url: "id", expect: "rejected", message: /must be a boolean expression/ },
  {
    kind: "non-boolean under not",
    url: "not id eq 1",
    expect: "rejected",
    message: /'not' must be a boolean/,
  },
  { kind: "literal type", url: "id eq 'x'", expect: "rejected", message: /Cannot compare 'id'/ },
  { kind: "unknown field", url: "nope eq 1", expect: "rejected", message: /Unknown field 'nope' of device/ },
  {
    kind: "unknown navigation",
    url: "nope/any(x:x/id eq 1)",
    expect: "rejected",
    message: /Unknown navigation 'nope' of device/,
  },
  // pinejs (and balena-sdk's getAllByOrganization): a to-one navigation is a collection of zero or one.
  {
    kind: "lambda on a to-one",
    url: "belongs_to__application/any(a:a/id eq 1)",
    expect: "compiled",
    ids: () => ids(1, 20),
  },
  {
    kind: "all on a to-one",
    url: "belongs_to__application/all(a:a/id eq 3)",
    expect: "compiled",
    ids: () => ids(41, 60),
  },
  { kind: "collection compared", url: "device_tag eq 1", expect: "rejected", message: /is a collection/ },
  {
    kind: "null ordering",
    url: "note gt null",
    expect: "rejected",
    message: /null can only be compared with eq or ne/,
  },
];

const treeCases: { kind: string; url: string; status: number; message?: RegExp }[] = [
  { kind: "resource", url: "/v6/device?$top=1", status: 200 },
  { kind: "key", url: "/v6/device(1)", status: 200 },
  { kind: "named key", url: "/v6/device(device_name='x')", status: 400, message: /is not a key of device/ },
  { kind: "count", url: "/v6/device/$count", status: 200 },
  {
    kind: "navigation in path",
    url: "/v6/application(1)/owns__device",
    status: 400,
    message: /navigation in the resource path/,
  },
  {
    kind: "action in path",
    url: "/v6/device(1)/canAccess",
    status: 400,
    message: /navigation in the resource path/,
  },
  { kind: "$links", url: "/v6/device(1)/$links/application", status: 400, message: /\$links/ },
  // The OData v4 service document (issue 31).
  { kind: "service root", url: "/v6/", status: 200 },
  { kind: "unknown resource", url: "/v6/nope", status: 404, message: /Unknown resource 'nope'/ },
  { kind: "$select *", url: "/v6/device?$select=*&$top=1", status: 200 },
  {
    kind: "$select path",
    url: "/v6/device?$select=belongs_to__application/id",
    status: 400,
    message: /\$select takes/,
  },
  {
    kind: "$select collection",
    url: "/v6/application?$select=owns__device",
    status: 400,
    message: /use \$expand/,
  },
  {
    kind: "$expand path",
    url: "/v6/device?$expand=belongs_to__application/organization",
    status: 400,
    message: /nest it/,
  },
  {
    kind: "$expand unknown",
    url: "/v6/device?$expand=nope",
    status: 400,
    message: /Unknown navigation 'nope'/,
  },
  {
    kind: "$expand $count with $top",
    url: "/v6/application?$expand=owns__device/$count($filter=id eq 1)",
    status: 200,
  },
  {
    kind: "$expand custom option",
    url: "/v6/device?$expand=belongs_to__application(x=1)",
    status: 400,
    message: /Unknown option 'x'/,
  },
  {
    kind: "$orderby lambda-free path",
    url: "/v6/device?$orderby=belongs_to__application/app_name&$top=1",
    status: 200,
  },
  {
    kind: "$orderby collection",
    url: "/v6/application?$orderby=owns__device",
    status: 400,
    message: /is a collection/,
  },
  { kind: "$inlinecount", url: "/v6/device?$inlinecount=allpages", status: 400, message: /\$inlinecount/ },
  { kind: "$format json", url: "/v6/device?$format=json&$top=1", status: 200 },
  {
    kind: "$format metadata",
    url: "/v6/device?$format=application/json;odata.metadata=minimal&$top=1",
    status: 200,
  },
  { kind: "$format xml", url: "/v6/device?$format=xml", status: 400 },
  { kind: "custom parameter", url: "/v6/device?apikey=x&$top=1", status: 200 },
];

describe.each(databaseKinds)("fail-closed compilation on %s", (kind) => {
  let server: TestServer;
  let allIds: number[];
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    allIds = (
      await server.test.db.prisma.device.findMany({ select: { id: true }, orderBy: { id: "asc" } })
    ).map((d) => d.id);
  });
  afterAll(() => server.close());

  it("the demo data has devices 1–60 (the expectations below rely on it)", () => {
    expect(allIds).toEqual(ids(1, 60));
  });

  it.each(cases)("$filter node $kind: $url", async (testCase) => {
    const response = await server.app.inject({
      method: "GET",
      url: `/v6/device?$select=id&$filter=${testCase.url}`,
    });
    if (testCase.expect === "rejected") {
      expect(response.statusCode, response.body).toBe(400);
      expect(JSON.parse(response.body)).toMatch(testCase.message);
      return;
    }
    expect(response.statusCode, response.body).toBe(200);
    const got = (JSON.parse(response.body) as { d: { id: number }[] }).d.map((row) => row.id);
    expect(got).toEqual(testCase.ids(allIds));
  });

  it.each(treeCases)("request part $kind: $url", async ({ url, status, message }) => {
    const response = await server.app.inject({ method: "GET", url });
    expect(response.statusCode, response.body).toBe(status);
    if (message) expect(JSON.parse(response.body)).toMatch(message);
  });
});
