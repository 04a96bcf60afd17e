import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Caller } from "../../src/auth/caller.ts";
import { permissionsFor } from "../../src/auth/policies.ts";
import type { ReadShape } from "../../src/core/read.ts";
import { StatementCache } from "../../src/core/statement-cache.ts";
import { buildModel } from "../../src/model/registry.ts";
import { type ReadContext, read, type UrlShapeRead } from "../../src/odata/read.ts";
import { shapeOf } from "../../src/odata/shape.ts";
import { buildVersions } from "../../src/odata/versions/index.ts";
import { buildFixture, type Fixture } from "../support/core/read-fixture.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// The statement cache must be invisible: every request answers exactly as the full path (parse,
// plan, compile) answers it, whatever literals it carries and whichever request taught the caches
// its shape: the cache of URL shapes (a hit skips parsing) and the cache of query shapes below it. Generated requests over shapes whose literals are cut out (keys, comparisons), shapes
// whose literals must not be (a `contains` pattern, a divisor, an `in` list), and literals clients
// write in awkward ways (quotes, percent signs, non-ASCII, out-of-range integers).

const text = fc.string({
  unit: fc.constantFrom("a", "b", "Z", "0", "9", " ", "'", "%", "+", "&", "/", "é", "_", "-", "~", "."),
  maxLength: 8,
});
const integer = fc.oneof(
  fc.integer({ min: -3, max: 60 }),
  fc.constantFrom(0, 2_147_483_647, -2_147_483_648, 2_147_483_648, 99_999_999_999),
);
// As pinejs-client writes a string literal: quotes doubled, the contents percent-encoded.
const quoted = (value: string) => `'${encodeURIComponent(value.replaceAll("'", "''"))}'`;
// As balena-sdk writes a key's quotes in the path.
const pathQuoted = (value: string) => `%27${encodeURIComponent(value.replaceAll("'", "''"))}%27`;

const requests = fc.oneof(
  integer.map((n) => `/device(${n})?$select=id,device_name`),
  text.map((s) => `/device(uuid=${pathQuoted(s)})?$select=id,uuid`),
  fc
    .tuple(fc.constantFrom("eq", "ne", "gt", "le"), integer)
    .map(([op, n]) => `/device?$filter=id ${op} ${n}&$select=id`),
  fc
    .tuple(integer, text)
    .map(
      ([n, s]) =>
        `/device?$filter=id%20gt%20${n}%20and%20device_name%20ne%20${quoted(s)}&$select=id,device_name`,
    ),
  fc
    .tuple(text, text)
    .map(([a, b]) => `/device?$filter=device_name eq ${quoted(a)} or note eq ${quoted(b)}&$select=id`),
  fc
    .tuple(integer, integer)
    .map(([a, b]) => `/application(${a})?$select=id&$expand=owns__device($select=id;$filter=id gt ${b})`),
  integer.map((n) => `/device/$count?$filter=id ge ${n}`),
  text.map((s) => `/device?$filter=contains(device_name,${quoted(s)})&$select=id`),
  integer.map((n) => `/device?$filter=cpu_usage div ${n} gt 0&$select=id`),
  fc.tuple(integer, integer).map(([a, b]) => `/device?$filter=id in (${a},${b})&$select=id`),
  integer.map((n) => `/device?$filter=id eq ${n}&$top=${Math.abs(n) % 5}&$select=id`),
);

async function answer(url: string, context: ReadContext) {
  try {
    const reply = await read({ version: "v6", url, headers: {} }, context);
    return { body: reply.body, contentType: reply.contentType };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

describe.each(databaseKinds)("the OData statement cache on %s", (kind) => {
  let test: TestDatabase;
  let fixture: Fixture;
  beforeAll(async () => {
    test = await freshDatabase(kind);
    fixture = await buildFixture(test.db);
  });
  afterAll(() => test.drop());

  const model = buildModel();
  const versions = buildVersions(model);

  it("cuts out keys and compared literals, and nothing else", () => {
    expect(shapeOf("/device(uuid=%27ab12%27)?$select=id")?.literals).toEqual([
      { kind: "string", raw: "ab12" },
    ]);
    expect(shapeOf("/device?$filter=id%20eq%205&$top=50")?.literals).toEqual([{ kind: "integer", raw: "5" }]);
    // The divisor stays in the shape; the compared 0 is cut out.
    expect(shapeOf("/device?$filter=cpu_usage div 5 gt 0")?.literals).toEqual([
      { kind: "integer", raw: "0" },
    ]);
    expect(shapeOf("/device?$filter=id eq 2147483648")?.literals).toEqual([]);
    expect(shapeOf("/device?$filter=created_at gt datetime'2024-01-01'")).toBeUndefined();
    expect(shapeOf("/device?$filter=device_name eq 'O''Brien'")).toBeUndefined();
  });

  it("answers every generated request exactly as the full path does, for an admin and a member", async () => {
    const [alice] = fixture.users;
    const callers: Caller[] = [
      {
        kind: "user",
        actor: 1_000_000,
        userId: 1_000_000,
        username: "admin",
        email: "",
        isAdmin: true,
        session: undefined,
      },
      {
        kind: "user",
        actor: alice?.actor as number,
        userId: alice?.id as number,
        username: "alice",
        email: "",
        isAdmin: false,
        session: undefined,
      },
    ];
    // Both caches, and the query cache alone (what an OData URL without a shape, and GraphQL, use).
    const caches = {
      urls: new StatementCache<UrlShapeRead>(),
      queries: new StatementCache<ReadShape>(),
    };
    const queriesOnly = {
      urls: new StatementCache<UrlShapeRead>(0),
      queries: new StatementCache<ReadShape>(),
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...callers), requests, async (caller, url) => {
        const base = { db: test.db, model, versions, permissions: permissionsFor(caller) };
        const expected = await answer(url, base);
        // Twice: the first may teach the cache this shape, the second then reads from it.
        for (const statementCaches of [caches, caches, queriesOnly, queriesOnly])
          expect(await answer(url, { ...base, statementCaches }), url).toEqual(expected);
      }),
      { numRuns: 400 },
    );
    expect(caches.urls.stats.hits).toBeGreaterThan(200);
    expect(queriesOnly.queries.stats.hits).toBeGreaterThan(200);
  });
});
