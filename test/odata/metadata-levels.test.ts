import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import type { Model, Resource } from "../../src/model/types.ts";
import { fkProperty, isNavigableLink } from "../../src/odata/v4/fk-properties.ts";
import { buildVersions } from "../../src/odata/versions/index.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// odata.metadata=full and none are written by the statement and the serializer, never by parsing
// the answer again. The oracle is what the server did before: parse the minimal answer and add
// each entity's control information in JavaScript (`annotate`, below, as it was). Generated reads
// of several versions, resources, selections, expansions and resource paths must answer exactly
// as the oracle does, member order included (bodies compared as parsed and written again: PostgreSQL
// spaces its arrays).

type Row = Record<string, unknown>;
const ETAG = "@odata.etag";

/** The former `atMetadataLevel`'s `annotate`, kept as the oracle. */
function annotate(entity: Row, resource: Resource, model: Model): Row {
  const id = entity.id;
  const link = typeof id === "number" ? `${resource.name}(${id})` : undefined;
  const { [ETAG]: etag, ...properties } = entity;
  const control: Row = { "@odata.type": `#fleetgate.${resource.name}` };
  if (link) Object.assign(control, { "@odata.id": link });
  if (etag !== undefined) control[ETAG] = etag;
  if (link) control["@odata.editLink"] = link;
  const members: Row = {};
  for (const [name, value] of Object.entries(properties)) {
    const navigation = resource.navigations.get(name);
    const target = navigation && model.resources.get(navigation.target);
    if (target && Array.isArray(value)) {
      members[name] = value.map((item) => annotate(item as Row, target, model));
    } else if (target && value !== null && typeof value === "object") {
      members[name] = annotate(value as Row, target, model);
    } else members[name] = value;
  }
  const navigationLinks: Row = {};
  if (link) {
    for (const name of resource.navigations.keys()) {
      navigationLinks[`${name}@odata.navigationLink`] = `${link}/${name}`;
    }
  }
  return { ...control, ...members, ...navigationLinks };
}

const versions = buildVersions(buildModel());
const versionNames = ["v5", "v6", "v7"] as const;
const resourceNames = ["device", "application", "release"] as const;

/** A `$select` of `id` and some of the resource's properties, in v4's names. */
function selectOf(resource: Resource): fc.Arbitrary<string> {
  const properties = [...resource.fields.values()]
    .filter((field) => field.name !== "id")
    .map((field) => (isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name));
  return fc
    .subarray(properties, { maxLength: Math.min(4, properties.length) })
    .map((names) => ["id", ...names].join(","));
}

function expandOf(resource: Resource, model: Model): fc.Arbitrary<string | undefined> {
  const navigations = [...resource.navigations.values()].filter((n) =>
    model.resources.get(n.target)?.fields.has("id"),
  );
  if (navigations.length === 0) return fc.constant(undefined);
  const item = fc.constantFrom(...navigations).chain((navigation) => {
    const target = model.resources.get(navigation.target) as Resource;
    return fc.oneof(
      fc.constant(`${navigation.name}/$count`),
      selectOf(target).map((select) => `${navigation.name}($select=${select})`),
      selectOf(target).map(
        (select) => `${navigation.name}($select=${select};$top=2;$orderby=id;$count=true)`,
      ),
    );
  });
  return fc.option(
    fc
      .uniqueArray(item, { maxLength: 2, selector: (text) => text.split(/[(/]/)[0] })
      .map((items) => items.join(",")),
    { nil: undefined },
  );
}

interface Read {
  readonly version: string;
  readonly resource: string;
  readonly key: boolean;
  /** A navigation of the entity read by key: a resource path. */
  readonly path?: string;
  readonly query: string;
}

const readOf: fc.Arbitrary<Read> = fc
  .record({ version: fc.constantFrom(...versionNames), resource: fc.constantFrom(...resourceNames) })
  .filter(({ version, resource }) => versions.view(version).model.resources.has(resource))
  .chain(({ version, resource: name }) => {
    const model = versions.view(version).model;
    const resource = model.resources.get(name) as Resource;
    const direct = fc
      .record({ key: fc.boolean(), select: selectOf(resource), expand: expandOf(resource, model) })
      .map(({ key, select, expand }) => ({
        version,
        resource: name,
        key,
        query: `$select=${select}${expand ? `&$expand=${expand}` : ""}${key ? "" : "&$top=3&$orderby=id"}`,
      }));
    const navigations = [...resource.navigations.values()].filter((n) =>
      model.resources.get(n.target)?.fields.has("id"),
    );
    const path = fc.constantFrom(...navigations).chain((navigation) =>
      selectOf(model.resources.get(navigation.target) as Resource).map((select) => ({
        version,
        resource: name,
        key: true,
        path: navigation.name,
        query: `$select=${select}`,
      })),
    );
    return navigations.length > 0 ? fc.oneof(direct, path) : direct;
  });

describe.each(databaseKinds)("odata.metadata levels on %s", (kind) => {
  let server: TestServer;
  const ids = new Map<string, number>();

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const prisma = server.test.db.prisma;
    // Rows that have something behind most of their navigations.
    const device = await prisma.device.findFirstOrThrow({
      where: { should_be_running__release: { not: null } },
      orderBy: { id: "asc" },
    });
    ids.set("device", device.id);
    ids.set("application", device.belongs_to__application);
    ids.set("release", device.should_be_running__release as number);
  });
  afterAll(() => server.close());

  const get = (url: string, level: string) =>
    server.app.inject({
      method: "GET",
      url,
      headers: { "odata-maxversion": "4.0", accept: `application/json;odata.metadata=${level}` },
    });

  const urlOf = (read: Read) =>
    `/${read.version}/${read.resource}${read.key ? `(${ids.get(read.resource)})` : ""}${read.path ? `/${read.path}` : ""}?${read.query}`;

  /** The resource of the entities the answer holds, in the requested version's names. */
  function answered(read: Read): Resource {
    const model = versions.view(read.version).model;
    const resource = model.resources.get(read.resource) as Resource;
    if (!read.path) return resource;
    const navigation = resource.navigations.get(read.path);
    return model.resources.get(navigation?.target as string) as Resource;
  }

  it("full: an entity's id and links even when $select leaves out id", async () => {
    const id = ids.get("device");
    const response = await get(`/v6/device(${id})?$select=device_name`, "full");
    expect(response.statusCode, response.body).toBe(200);
    const entity = JSON.parse(response.body) as Row;
    expect(entity).toMatchObject({
      "@odata.id": `device(${id})`,
      "@odata.editLink": `device(${id})`,
      "device_tag@odata.navigationLink": `device(${id})/device_tag`,
    });
    expect(entity).not.toHaveProperty("id");
  });

  it("full and none answer as the minimal answer annotated in JavaScript would", async () => {
    await fc.assert(
      fc.asyncProperty(readOf, async (read) => {
        const url = urlOf(read);
        const minimal = await get(url, "minimal");
        const [full, none] = [await get(url, "full"), await get(url, "none")];
        expect([full.statusCode, none.statusCode], url).toEqual([minimal.statusCode, minimal.statusCode]);
        if (minimal.statusCode !== 200) return;
        expect(full.headers["content-type"]).toMatch(/odata\.metadata="?full"?/);
        expect(none.headers["content-type"]).toMatch(/odata\.metadata="?none"?/);
        expect([full.headers.etag, none.headers.etag]).toEqual([minimal.headers.etag, minimal.headers.etag]);
        const model = versions.view(read.version).model;
        const resource = answered(read);
        const { "@odata.context": context, ...rest } = JSON.parse(minimal.body) as Row;
        const fullBody = JSON.parse(full.body) as Row;
        const noneBody = JSON.parse(none.body) as Row;
        if (Array.isArray(rest.value)) {
          const entities = rest.value as Row[];
          // A collection's entities carry their ETags only at full metadata (not a path's).
          const fullEntities = (fullBody.value as Row[]).map(({ [ETAG]: etag, ...entity }) => {
            if (read.path) expect(etag, url).toBeUndefined();
            else expect(etag, url).toMatch(/^W\/"/);
            return entity;
          });
          expect(JSON.stringify({ ...fullBody, value: fullEntities }), url).toBe(
            JSON.stringify({
              "@odata.context": context,
              ...rest,
              value: entities.map((entity) => annotate(entity, resource, model)),
            }),
          );
          expect(JSON.stringify(noneBody), url).toBe(JSON.stringify(rest));
        } else {
          expect(JSON.stringify(fullBody), url).toBe(
            JSON.stringify({ "@odata.context": context, ...annotate(rest, resource, model) }),
          );
          const { [ETAG]: _etag, ...entity } = rest;
          expect(JSON.stringify(noneBody), url).toBe(JSON.stringify(entity));
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
