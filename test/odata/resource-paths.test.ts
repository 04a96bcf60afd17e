import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import type { Navigation, Resource } from "../../src/model/types.ts";
import { fkProperty, isNavigableLink } from "../../src/odata/v4/fk-properties.ts";
import { buildVersions } from "../../src/odata/versions/index.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A resource path (`device(5)/belongs_to__application/app_name`) is answered by its statement,
// which takes the value the path names out of the answer of the path's query. The oracle reads
// that query as an ordinary URL (each navigation an `$expand`, a key its `$filter`) and walks its
// answer in JavaScript, as the server did before; every generated path must answer as it says.

type Row = Record<string, unknown>;
const model = buildVersions(buildModel()).view("v6").model;
const resourceOf = (name: string) => model.resources.get(name) as Resource;
const roots = ["device", "application", "release"] as const;
const keys = [1, 2, 3, 4, 987654];

interface Step {
  readonly navigation: Navigation;
  readonly key?: number;
}

type End =
  | { readonly kind: "entity" | "ref" }
  | { readonly kind: "collection"; readonly options: string; readonly ref: boolean }
  | { readonly kind: "count" }
  | { readonly kind: "property"; readonly name: string; readonly raw: boolean };

interface Path {
  readonly root: string;
  readonly id: number;
  readonly steps: readonly Step[];
  readonly end: End;
}

const properties = (resource: Resource) =>
  [...resource.fields.values()]
    .filter((field) => field.selectedByDefault)
    .map((field) => (isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name));

/** One step from `resource`: a navigation, keyed when it goes to many and the path goes on. */
function stepsFrom(resource: Resource, depth: number): fc.Arbitrary<{ steps: Step[]; last: Resource }> {
  const navigations = [...resource.navigations.values()].filter((n) => model.resources.has(n.target));
  const step = fc.record({ navigation: fc.constantFrom(...navigations), key: fc.constantFrom(...keys) });
  return fc.tuple(step, fc.boolean()).chain(([{ navigation, key }, more]) => {
    const target = resourceOf(navigation.target);
    const here: Step = navigation.cardinality === "many" ? { navigation, key } : { navigation };
    if (depth === 1 || !more) return fc.constant({ steps: [here], last: target });
    return stepsFrom(target, depth - 1).map((rest) => ({ steps: [here, ...rest.steps], last: rest.last }));
  });
}

const pathOf: fc.Arbitrary<Path> = fc
  .record({ root: fc.constantFrom(...roots), id: fc.constantFrom(...keys) })
  .chain(({ root, id }) =>
    stepsFrom(resourceOf(root), 2).chain(({ steps, last }) => {
      const final = steps[steps.length - 1] as Step;
      // The last step to many may also be the whole collection (no key).
      const collection = final.navigation.cardinality === "many";
      const asCollection = collection ? fc.boolean() : fc.constant(false);
      return asCollection.chain((whole) => {
        const ended = whole ? [...steps.slice(0, -1), { navigation: final.navigation }] : steps;
        const ends: fc.Arbitrary<End>[] = whole
          ? [
              fc.constant({ kind: "count" } as const),
              fc.record({
                kind: fc.constant("collection" as const),
                options: fc.constantFrom("", "$orderby=id desc&$top=2", "$top=1&$count=true", "$count=true"),
                ref: fc.boolean(),
              }),
            ]
          : [
              fc.constantFrom({ kind: "entity" } as const, { kind: "ref" } as const),
              fc.record({
                kind: fc.constant("property" as const),
                name: fc.constantFrom(...properties(last)),
                raw: fc.boolean(),
              }),
            ];
        return fc.oneof(...ends).map((end) => ({ root, id, steps: ended, end }));
      });
    }),
  );

function urlOf(path: Path): string {
  const segments = path.steps.map(
    ({ navigation, key }) => `${navigation.name}${key === undefined ? "" : `(${key})`}`,
  );
  const end = path.end;
  const tail =
    end.kind === "ref"
      ? ["$ref"]
      : end.kind === "count"
        ? ["$count"]
        : end.kind === "property"
          ? [end.name, ...(end.raw ? ["$value"] : [])]
          : end.kind === "collection" && end.ref
            ? ["$ref"]
            : [];
  const query = end.kind === "collection" && end.options !== "" ? `?${end.options}` : "";
  return `/v6/${path.root}(${path.id})/${[...segments, ...tail].join("/")}${query}`;
}

/** The path's query as a URL of its root entity's collection: each step an expansion, a key its filter. */
function oracleUrlOf(path: Path): string {
  const end = path.end;
  const endOptions =
    end.kind === "property"
      ? [`$select=id,${end.name}`]
      : end.kind === "ref" || (end.kind === "collection" && end.ref)
        ? ["$select=id"]
        : [];
  const extra = end.kind === "collection" && end.options !== "" ? end.options.split("&") : [];
  let expand = "";
  // Built from the last step out.
  [...path.steps].reverse().forEach((at, i) => {
    const filter = at.key === undefined ? [] : [`$filter=id eq ${at.key}`];
    const options =
      i === 0 ? [...filter, ...endOptions, ...extra] : ["$select=id", ...filter, `$expand=${expand}`];
    const name = at.navigation.name;
    expand =
      i === 0 && end.kind === "count"
        ? `${name}/$count`
        : options.length === 0
          ? name
          : `${name}(${options.join(";")})`;
  });
  return `/v6/${path.root}?$filter=id eq ${path.id}&$select=id&$expand=${expand}`;
}

/** What the server answered before: the old walk over the parsed answer. */
function walked(path: Path, answer: Row): { status: number; body?: unknown } {
  const [root] = answer.value as Row[];
  if (!root) return { status: 404 };
  let value: unknown = root;
  for (const [i, step] of path.steps.entries()) {
    const parent = value as Row;
    const name = step.navigation.name;
    const last = i === path.steps.length - 1;
    if (last && (path.end.kind === "count" || path.end.kind === "collection")) {
      const count = parent[`${name}@odata.count`];
      return { status: 200, body: path.end.kind === "count" ? parent[name] : { count, value: parent[name] } };
    }
    const next = parent[name];
    value = Array.isArray(next) ? next[0] : next;
    if (value === undefined || (value === null && !(last && step.navigation.cardinality === "one"))) {
      return { status: 404 };
    }
    if (value === null) return { status: 204 };
  }
  const entity = value as Row;
  if (path.end.kind === "property") {
    const property = entity[path.end.name];
    return property === null || property === undefined ? { status: 204 } : { status: 200, body: property };
  }
  return { status: 200, body: entity };
}

describe.each(databaseKinds)("resource paths on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
  });
  afterAll(() => server.close());

  const get = (url: string) =>
    server.app.inject({ method: "GET", url, headers: { "odata-maxversion": "4.0" } });

  it("answer as the walk over their query's answer does", async () => {
    await fc.assert(
      fc.asyncProperty(pathOf, async (path) => {
        const url = urlOf(path);
        const oracle = await get(oracleUrlOf(path));
        expect(oracle.statusCode, `${oracleUrlOf(path)}: ${oracle.body}`).toBe(200);
        const expected = walked(path, JSON.parse(oracle.body) as Row);
        const response = await get(url);
        expect(response.statusCode, `${url}: ${response.body}`).toBe(expected.status);
        expect(response.headers["x-sql-statements"], url).toBe("1");
        if (expected.status !== 200) return;
        const set = (path.steps[path.steps.length - 1] as Step).navigation.target;
        const end = path.end;
        const context = (fragment: string) => `/v6/$metadata#${fragment}`;
        const ref = (entity: Row) => ({ "@odata.id": `${set}(${String(entity.id)})` });
        switch (end.kind) {
          case "count":
            expect(response.body, url).toBe(String(expected.body));
            return;
          case "property":
            if (end.raw) {
              const value = expected.body;
              expect(response.body, url).toBe(typeof value === "string" ? value : JSON.stringify(value));
            } else {
              const fragment = `${set}(${response.body.match(/\((\d+)\)/)?.[1]})/${end.name}`;
              expect(JSON.parse(response.body), url).toStrictEqual({
                "@odata.context": context(fragment),
                value: expected.body,
              });
            }
            return;
          case "collection": {
            const { count, value } = expected.body as { count: unknown; value: Row[] };
            expect(JSON.parse(response.body), url).toStrictEqual({
              "@odata.context": context(end.ref ? "Collection($ref)" : set),
              ...(count === undefined ? {} : { "@odata.count": count }),
              value: end.ref ? value.map(ref) : value,
            });
            return;
          }
          case "entity":
          case "ref":
            expect(JSON.parse(response.body), url).toStrictEqual(
              end.kind === "ref"
                ? { "@odata.context": context("$ref"), ...ref(expected.body as Row) }
                : { "@odata.context": context(`${set}/$entity`), ...(expected.body as Row) },
            );
        }
      }),
      { numRuns: 250 },
    );
  }, 120_000);
});
