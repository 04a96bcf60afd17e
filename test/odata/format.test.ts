import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Response formats: the pinejs wire format by default, standard OData v4 JSON when the client
// negotiates it, and the CSDL document at /v6/$metadata. Expected rows come from Prisma.

const v4Minimal = "application/json;odata.metadata=minimal";

/** The three ways a client asks for OData v4 JSON (the $format one also %-encoded, as URLSearchParams sends it). */
const negotiations: { name: string; headers: Record<string, string>; query: string }[] = [
  { name: "OData-Version: 4.0", headers: { "odata-version": "4.0" }, query: "" },
  { name: `Accept: ${v4Minimal}`, headers: { accept: v4Minimal }, query: "" },
  { name: `$format=${v4Minimal}`, headers: {}, query: `&$format=${v4Minimal}` },
  {
    name: "$format=application%2Fjson%3Bodata.metadata%3Dminimal",
    headers: {},
    query: "&$format=application%2Fjson%3Bodata.metadata%3Dminimal",
  },
];

/** A media type and its parameters (a quoted-string value is the same value, RFC 9110 §5.6.6). */
function mediaType(header: unknown): { type: string; parameters: Record<string, string> } {
  const [type = "", ...parameters] = String(header).split(";");
  return {
    type: type.trim().toLowerCase(),
    parameters: Object.fromEntries(
      parameters.map((parameter) => {
        const [name = "", value = ""] = parameter.split("=");
        return [name.trim().toLowerCase(), value.trim().replace(/^"(.*)"$/, "$1")];
      }),
    ),
  };
}

function expectV4ContentType(header: unknown): void {
  const { type, parameters } = mediaType(header);
  expect(type, String(header)).toBe("application/json");
  expect(parameters["odata.metadata"], String(header)).toBe("minimal");
}

// ---- a small XML reader, enough for the generated CSDL --------------------------------------------
interface XmlElement {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly children: XmlElement[];
}

const decodeXml = (text: string) =>
  text
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

/** Parses elements and attributes; throws on unbalanced tags or stray text, so the document must be well-formed. */
function parseXml(document: string): XmlElement {
  const root: XmlElement = { name: "#document", attributes: {}, children: [] };
  const stack: XmlElement[] = [root];
  const token = /<\?[^>]*\?>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let at = 0;
  for (;;) {
    token.lastIndex = at;
    match = token.exec(document);
    if (!match) break;
    at = token.lastIndex;
    const [whole, closing, name, attributeText, selfClosing, text] = match;
    if (whole.startsWith("<?")) continue;
    if (text !== undefined) {
      // Text only inside a path expression (a capability annotation's property list).
      const inPath = stack[stack.length - 1]?.name === "PropertyPath";
      if (text.trim() !== "" && !inPath)
        throw new Error(`unexpected text ${JSON.stringify(text.slice(0, 40))}`);
      continue;
    }
    const top = stack[stack.length - 1] as XmlElement;
    if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of (attributeText ?? "").matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) {
      if (key === undefined || value === undefined) continue;
      if (Object.hasOwn(attributes, key)) throw new Error(`duplicate attribute ${key} on <${name}>`);
      attributes[key] = decodeXml(value);
    }
    const element: XmlElement = { name: name as string, attributes, children: [] };
    top.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (at !== document.length) throw new Error(`cannot read the XML at character ${at}`);
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]?.name}> is not closed`);
  return root;
}

const childrenNamed = (element: XmlElement, name: string) => element.children.filter((c) => c.name === name);
function only(elements: XmlElement[], what: string): XmlElement {
  expect(elements, what).toHaveLength(1);
  return elements[0] as XmlElement;
}
function descendants(element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((child) => [
    ...(child.name === name ? [child] : []),
    ...descendants(child, name),
  ]);
}

// Edm types of the registry's scalar types, and of the PostgreSQL columns behind them.
const edmOfScalar: Record<string, string> = {
  Integer: "Edm.Int32",
  Text: "Edm.String",
  Boolean: "Edm.Boolean",
  DateTime: "Edm.DateTimeOffset",
  // JSON documents travel as strings in CSDL (supervisor_command.data and .results).
  JSON: "Edm.String",
};
const edmOfColumn: Record<string, string> = {
  integer: "Edm.Int32",
  text: "Edm.String",
  boolean: "Edm.Boolean",
  "timestamp with time zone": "Edm.DateTimeOffset",
  jsonb: "Edm.String",
};

describe.each(databaseKinds)("response formats on %s", (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
  });
  afterAll(() => server.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    server.app.inject({ method: "GET", url, headers });
  const prisma = () => server.test.db.prisma;

  describe("OData v4 JSON", () => {
    it.each(negotiations)("$name gives {@odata.context, value}", async ({ headers, query }) => {
      const response = await get(`/v6/device?$select=id,uuid&$orderby=id asc&$top=3${query}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      expectV4ContentType(response.headers["content-type"]);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" }, take: 3 })).map((row) => ({
        id: row.id,
        uuid: row.uuid,
      }));
      expect(JSON.parse(response.body)).toStrictEqual({
        "@odata.context": "/v6/$metadata#device",
        value: expected,
      });
      // The context is the first member, as OData v4 JSON requires.
      expect(response.body.startsWith('{"@odata.context":')).toBe(true);
      expect(response.headers["odata-version"]).toBe("4.0");
    });

    it.each(negotiations)("$name: @odata.context names the resource", async ({ headers, query }) => {
      const response = await get(`/v6/application?$select=id${query}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)["@odata.context"]).toBe("/v6/$metadata#application");
    });

    it("$count=true gives @odata.count, the number of matching rows before $top", async () => {
      const response = await get(
        "/v6/device?$count=true&$filter=is_online eq true&$select=id&$orderby=id asc&$top=2",
        {
          "odata-version": "4.0",
        },
      );
      expect(response.statusCode, response.body).toBe(200);
      const body = JSON.parse(response.body);
      expect(body["@odata.count"]).toBe(await prisma().device.count({ where: { is_online: true } }));
      expect(body.value).toStrictEqual(
        (await prisma().device.findMany({ where: { is_online: true }, orderBy: { id: "asc" }, take: 2 })).map(
          (row) => ({
            id: row.id,
          }),
        ),
      );
      expect(Object.keys(body)).toEqual(["@odata.context", "@odata.count", "value"]);
    });

    it("$count=true with $format (no header) gives @odata.count too", async () => {
      const response = await get(`/v6/application?$count=true&$select=id&$top=1&$format=${v4Minimal}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)["@odata.count"]).toBe(await prisma().application.count());
    });

    it("an unexpanded link is its id property <link>__id (or null), named either way in $select", async () => {
      const response = await get(
        "/v6/device?$select=id,belongs_to__application,should_be_running__release__id,is_of__device_type&$orderby=id asc",
        { "odata-version": "4.0" },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" } })).map((row) => ({
        id: row.id,
        belongs_to__application__id: row.belongs_to__application,
        should_be_running__release__id: row.should_be_running__release,
        is_of__device_type__id: row.is_of__device_type,
      }));
      expect(expected.some((row) => row.should_be_running__release__id === null)).toBe(true);
      expect(expected.some((row) => row.should_be_running__release__id !== null)).toBe(true);
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("an expanded to-one link is an object, or null when the link is null", async () => {
      const response = await get(
        "/v6/device?$select=id&$orderby=id asc&$expand=belongs_to__application($select=id,slug,organization),should_be_running__release($select=id,commit)",
        { accept: v4Minimal },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().device.findMany({
          include: { Application: true, PinnedRelease: true },
          orderBy: { id: "asc" },
        })
      ).map((row) => ({
        id: row.id,
        // Inside an expansion, an unexpanded link is its id property as well.
        belongs_to__application: {
          id: row.Application.id,
          slug: row.Application.slug,
          organization__id: row.Application.organization,
        },
        should_be_running__release: row.PinnedRelease
          ? { id: row.PinnedRelease.id, commit: row.PinnedRelease.commit }
          : null,
      }));
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("a nested to-one expansion is an object in an object; a to-many one an array", async () => {
      const response = await get(
        "/v6/application?$select=id&$orderby=id asc&$expand=organization($select=handle),owns__device($select=id;$orderby=id asc;$top=2;$expand=is_of__device_type($select=slug))",
        { "odata-version": "4.0" },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().application.findMany({
          include: {
            Organization: true,
            Devices: { orderBy: { id: "asc" }, take: 2, include: { DeviceType: true } },
          },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({
        id: app.id,
        organization: { handle: app.Organization.handle },
        owns__device: app.Devices.map((device) => ({
          id: device.id,
          is_of__device_type: { slug: device.DeviceType.slug },
        })),
      }));
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("/device/$count is text/plain", async () => {
      const response = await get("/v6/device/$count", { "odata-version": "4.0" });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/plain/);
      expect(response.body).toBe(String(await prisma().device.count()));
    });

    it("/device/$count?$filter=… is text/plain (negotiated with $format)", async () => {
      const response = await get(`/v6/device/$count?$filter=is_online eq false&$format=${v4Minimal}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/plain/);
      expect(response.body).toBe(String(await prisma().device.count({ where: { is_online: false } })));
    });

    const badRequests = [
      { name: "unknown field", url: "/v6/device?$select=no_such_field", status: 400 },
      { name: "malformed $filter", url: "/v6/device?$filter=id eq", status: 400 },
      { name: "unknown resource", url: "/v6/no_such_resource", status: 404 },
    ];
    it.each(
      badRequests.flatMap((bad) =>
        negotiations.map((negotiation) => ({ ...negotiation, ...bad, negotiation: negotiation.name })),
      ),
    )(
      "error: $name, negotiated by $negotiation → {error:{code,message}}",
      async ({ url, status, headers, query }) => {
        const withFormat = query === "" ? url : `${url}${url.includes("?") ? query : `?${query.slice(1)}`}`;
        const response = await get(withFormat, headers);
        expect(response.statusCode, response.body).toBe(status);
        expect(response.headers["content-type"]).toMatch(/^application\/json/);
        const body = JSON.parse(response.body);
        expect(Object.keys(body)).toEqual(["error"]);
        expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
        expect(typeof body.error.code).toBe("string");
        expect(body.error.code).not.toBe("");
        expect(typeof body.error.message).toBe("string");
        expect(body.error.message).not.toBe("");
      },
    );

    it("a count, an error and $metadata say OData-Version 4.0; a pinejs answer does not", async () => {
      const count = await get("/v6/device/$count", { "odata-version": "4.0" });
      expect([count.statusCode, count.headers["odata-version"]]).toEqual([200, "4.0"]);
      const error = await get("/v6/no_such_resource", { "odata-version": "4.0" });
      expect([error.statusCode, error.headers["odata-version"]]).toEqual([404, "4.0"]);
      const metadata = await get("/v6/$metadata");
      expect(metadata.headers["odata-version"]).toBe("4.0");
      const pinejs = await get("/v6/device?$top=1");
      expect([pinejs.statusCode, pinejs.headers["odata-version"]]).toEqual([200, undefined]);
      const pinejsError = await get("/v6/no_such_resource");
      expect(pinejsError.headers["odata-version"]).toBeUndefined();
    });

    it("error: $format=xml with OData-Version 4.0 → 400 {error:{code,message}}", async () => {
      const response = await get("/v6/device?$format=xml", { "odata-version": "4.0" });
      expect(response.statusCode, response.body).toBe(400);
      const body = JSON.parse(response.body);
      expect(typeof body.error?.code).toBe("string");
      expect(typeof body.error?.message).toBe("string");
    });
  });

  describe("pinejs wire format", () => {
    const pinejsCases: { name: string; query: string; headers: Record<string, string> }[] = [
      { name: "no negotiation", query: "", headers: {} },
      { name: "$format=json", query: "&$format=json", headers: {} },
      { name: "$format=application/json", query: "&$format=application/json", headers: {} },
      { name: "Accept: application/json", query: "", headers: { accept: "application/json" } },
      { name: "Accept: */* (balena-sdk)", query: "", headers: { accept: "*/*" } },
    ];
    it.each(pinejsCases)("$name gives {d:[…]} with {__id} links", async ({ query, headers }) => {
      const response = await get(
        `/v6/device?$select=id,belongs_to__application,should_be_running__release&$orderby=id asc&$top=12${query}`,
        headers,
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(response.headers["content-type"]).not.toMatch(/odata\.metadata/);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" }, take: 12 })).map((row) => ({
        id: row.id,
        belongs_to__application: { __id: row.belongs_to__application },
        should_be_running__release:
          row.should_be_running__release === null ? null : { __id: row.should_be_running__release },
      }));
      expect(JSON.parse(response.body)).toStrictEqual({ d: expected });
    });

    it("an expanded to-one link is an array, [] for a null link", async () => {
      const response = await get(
        "/v6/device?$select=id&$orderby=id asc&$expand=should_be_running__release($select=id),belongs_to__application($select=id)",
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().device.findMany({ include: { PinnedRelease: true }, orderBy: { id: "asc" } })
      ).map((row) => ({
        id: row.id,
        should_be_running__release: row.PinnedRelease ? [{ id: row.PinnedRelease.id }] : [],
        belongs_to__application: [{ id: row.belongs_to__application }],
      }));
      expect(JSON.parse(response.body)).toStrictEqual({ d: expected });
    });

    it("/device/$count is {d:N}", async () => {
      const response = await get("/v6/device/$count?$filter=is_online eq true");
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(response.body)).toStrictEqual({
        d: await prisma().device.count({ where: { is_online: true } }),
      });
    });

    it("a key that matches nothing is {d:[]}", async () => {
      const response = await get("/v6/device(987654)");
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toStrictEqual({ d: [] });
    });

    it.each([
      { url: "/v6/device?$select=no_such_field", status: 400 },
      { url: "/v6/device?$filter=id eq", status: 400 },
      { url: "/v6/no_such_resource", status: 404 },
      { url: "/v6/device?$format=json&$select=no_such_field", status: 400 },
    ])("error $url → $status, the message as a JSON string", async ({ url, status }) => {
      const response = await get(url);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      const body = JSON.parse(response.body);
      expect(typeof body).toBe("string");
      expect(body).not.toBe("");
    });

    it("$format=xml → 400 (a JSON string)", async () => {
      const response = await get("/v6/device?$format=xml");
      expect(response.statusCode, response.body).toBe(400);
      expect(typeof JSON.parse(response.body)).toBe("string");
    });

    it("$format=atom → 400", async () => {
      const response = await get("/v6/device?$format=atom");
      expect(response.statusCode, response.body).toBe(400);
    });
  });

  describe("the service document at each version's root", () => {
    it.each(["/v6/", "/v6", "/v7/", "/v1/"])(
      "GET %s lists that version's entity sets, as OData v4 JSON",
      async (url) => {
        const version = url.split("/")[1] as string;
        const response = await get(url);
        expect(response.statusCode, response.body).toBe(200);
        expect(response.headers["content-type"]).toMatch(/^application\/json/);
        expect(response.headers["odata-version"]).toBe("4.0");
        const document = JSON.parse(response.body) as {
          "@odata.context": string;
          value: Record<string, string>[];
        };
        expect(document["@odata.context"]).toBe(`/${version}/$metadata`);
        const sets = new Map(document.value.map((set) => [set.name, set]));
        expect(sets.get(version === "v1" ? "device" : "application")).toEqual({
          name: version === "v1" ? "device" : "application",
          kind: "EntitySet",
          url: version === "v1" ? "device" : "application",
        });
        // Each version's own names: v7 has no my_application, v1 no release (it says build).
        expect(sets.has("my_application")).toBe(version === "v6");
        expect(sets.has("release")).toBe(version !== "v1");
        // Every set listed is readable at its URL.
        for (const set of document.value.slice(0, 3)) {
          expect((await get(`/${version}/${set.url}?$top=1`)).statusCode, set.url).toBe(200);
        }
      },
    );

    it("refuses an invalid credential, as every route does", async () => {
      const response = await get("/v6/", { authorization: "Bearer not-a-key" });
      expect(response.statusCode).toBe(401);
    });
  });

  describe("GET /v6/$metadata", () => {
    const model = buildModel();
    let schema: XmlElement;
    let namespace: string;
    const entityType = (name: string) =>
      only(
        childrenNamed(schema, "EntityType").filter((t) => t.attributes.Name === name),
        `EntityType ${name}`,
      );

    beforeAll(async () => {
      const response = await get("/v6/$metadata");
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/xml/);
      const document = parseXml(response.body);
      const edmx = only(childrenNamed(document, "edmx:Edmx"), "edmx:Edmx");
      expect(edmx.attributes.Version).toBe("4.0");
      expect(edmx.attributes["xmlns:edmx"]).toBe("http://docs.oasis-open.org/odata/ns/edmx");
      const services = only(childrenNamed(edmx, "edmx:DataServices"), "edmx:DataServices");
      schema = only(childrenNamed(services, "Schema"), "Schema");
      expect(schema.attributes.xmlns).toBe("http://docs.oasis-open.org/odata/ns/edm");
      namespace = schema.attributes.Namespace as string;
      expect(namespace).toMatch(/^[A-Za-z_][\w.]*$/);
    });

    it("has one EntityType and one EntitySet per resource, and nothing else", () => {
      const names = [...model.resources.keys()].sort();
      expect(
        childrenNamed(schema, "EntityType")
          .map((t) => t.attributes.Name)
          .sort(),
      ).toEqual(names);
      const container = only(childrenNamed(schema, "EntityContainer"), "EntityContainer");
      const sets = childrenNamed(container, "EntitySet");
      expect(sets.map((s) => s.attributes.Name).sort()).toEqual(names);
      for (const set of sets) expect(set.attributes.EntityType).toBe(`${namespace}.${set.attributes.Name}`);
    });

    it("keys every EntityType on id", () => {
      for (const name of model.resources.keys()) {
        const key = only(childrenNamed(entityType(name), "Key"), `Key of ${name}`);
        expect(
          childrenNamed(key, "PropertyRef").map((ref) => ref.attributes.Name),
          name,
        ).toEqual(["id"]);
      }
    });

    it("lists every field as a Property with its Edm type and Nullable; every link as a to-one NavigationProperty", () => {
      for (const resource of model.resources.values()) {
        const type = entityType(resource.name);
        const properties = new Map(childrenNamed(type, "Property").map((p) => [p.attributes.Name, p]));
        const navigations = new Map(
          childrenNamed(type, "NavigationProperty").map((n) => [n.attributes.Name, n]),
        );
        // A link to an internal table (an API key's actor) leads nowhere: a plain property.
        const expandable = (field: { name: string; link?: string }) =>
          field.link !== undefined && resource.navigations.has(field.name);
        // A link's id is the property <link>__id, which its navigation's ReferentialConstraint names.
        const propertyName = (field: { name: string; link?: string }) =>
          expandable(field) ? `${field.name}__id` : field.name;
        const plain = [...resource.fields.values()];
        expect([...properties.keys()].sort(), resource.name).toEqual(plain.map(propertyName).sort());
        for (const field of plain) {
          const property = properties.get(propertyName(field)) as XmlElement;
          expect(property.attributes.Type, `${resource.name}.${field.name}`).toBe(edmOfScalar[field.type]);
          expect(property.attributes.Nullable, `${resource.name}.${field.name}`).toBe(String(field.nullable));
          const computed = childrenNamed(property, "Annotation").some(
            (a) => a.attributes.Term === "Org.OData.Core.V1.Computed" && a.attributes.Bool === "true",
          );
          expect(computed, `${resource.name}.${field.name} Computed`).toBe(field.computed);
        }
        for (const field of resource.fields.values()) {
          if (!expandable(field)) continue;
          const navigation = navigations.get(field.name);
          expect(navigation, `${resource.name}.${field.name}`).toBeDefined();
          expect(navigation?.attributes.Type, `${resource.name}.${field.name}`).toBe(
            `${namespace}.${field.link}`,
          );
          expect(navigation?.attributes.Nullable, `${resource.name}.${field.name}`).toBe(
            String(field.nullable),
          );
        }
      }
    });

    it("lists every navigation as a NavigationProperty, Collection(…) for to-many, bound in the EntitySet", () => {
      const container = only(childrenNamed(schema, "EntityContainer"), "EntityContainer");
      const typeNames = new Set(childrenNamed(schema, "EntityType").map((t) => t.attributes.Name));
      for (const resource of model.resources.values()) {
        const navigations = childrenNamed(entityType(resource.name), "NavigationProperty");
        expect(navigations.map((n) => n.attributes.Name).sort(), resource.name).toEqual(
          [...resource.navigations.keys()].sort(),
        );
        const set = only(
          childrenNamed(container, "EntitySet").filter((s) => s.attributes.Name === resource.name),
          `EntitySet ${resource.name}`,
        );
        const bindings = new Map(
          childrenNamed(set, "NavigationPropertyBinding").map((b) => [
            b.attributes.Path,
            b.attributes.Target,
          ]),
        );
        for (const navigation of resource.navigations.values()) {
          const element = navigations.find((n) => n.attributes.Name === navigation.name) as XmlElement;
          const target = `${namespace}.${navigation.target}`;
          const where = `${resource.name}.${navigation.name}`;
          if (navigation.cardinality === "many") {
            expect(element.attributes.Type, where).toBe(`Collection(${target})`);
            expect(element.attributes.Nullable, where).toBeUndefined();
          } else {
            expect(element.attributes.Type, where).toBe(target);
          }
          expect(typeNames.has(navigation.target), where).toBe(true);
          expect(bindings.get(navigation.name), where).toBe(navigation.target);
        }
      }
    });

    it("spot checks: device and application", () => {
      const device = entityType("device");
      const property = (type: XmlElement, name: string) =>
        only(
          childrenNamed(type, "Property").filter((p) => p.attributes.Name === name),
          name,
        ).attributes;
      const navigation = (type: XmlElement, name: string) =>
        only(
          childrenNamed(type, "NavigationProperty").filter((p) => p.attributes.Name === name),
          name,
        ).attributes;
      expect(property(device, "id")).toMatchObject({ Type: "Edm.Int32", Nullable: "false" });
      expect(property(device, "uuid")).toMatchObject({ Type: "Edm.String", Nullable: "false" });
      expect(property(device, "note")).toMatchObject({ Type: "Edm.String", Nullable: "true" });
      expect(property(device, "is_online")).toMatchObject({ Type: "Edm.Boolean", Nullable: "false" });
      expect(property(device, "last_connectivity_event")).toMatchObject({
        Type: "Edm.DateTimeOffset",
        Nullable: "true",
      });
      expect(property(device, "overall_status")).toMatchObject({ Type: "Edm.String", Nullable: "false" });
      expect(property(device, "actor")).toMatchObject({ Type: "Edm.Int32", Nullable: "false" });
      expect(navigation(device, "belongs_to__application")).toMatchObject({
        Type: `${namespace}.application`,
        Nullable: "false",
      });
      expect(navigation(device, "should_be_running__release")).toMatchObject({
        Type: `${namespace}.release`,
        Nullable: "true",
      });
      expect(navigation(device, "device_tag")).toMatchObject({ Type: `Collection(${namespace}.device_tag)` });
      expect(navigation(entityType("application"), "owns__device")).toMatchObject({
        Type: `Collection(${namespace}.device)`,
      });
      expect(navigation(entityType("organization"), "application")).toMatchObject({
        Type: `Collection(${namespace}.application)`,
      });
    });

    it("never shows a hidden column", () => {
      const hidden: Record<string, string[]> = {
        user: ["password", "jwt_secret"],
        device: [
          "supervisor_api_address",
          "supervisor_api_port",
          "supervisor_api_key_ciphertext",
          "supervisor_api_key_retired",
          "last_heartbeat_at",
          "changed_api_heartbeat_state_on__date",
        ],
        api_key: ["key_hash"],
        device_type: ["catalogue"],
      };
      for (const [resource, columns] of Object.entries(hidden)) {
        if (!model.resources.has(resource)) continue;
        const names = entityType(resource).children.map((c) => c.attributes.Name);
        for (const column of columns) expect(names, `${resource}.${column}`).not.toContain(column);
      }
    });

    it("annotates the alternate keys: uuid of device, the composite key of device_tag", () => {
      const alternateKeys = (name: string) =>
        childrenNamed(entityType(name), "Annotation")
          .filter((a) => a.attributes.Term === "Org.OData.Core.V1.AlternateKeys")
          .flatMap((a) => descendants(a, "Record").filter((r) => descendants(r, "Collection").length > 0))
          .map((record) =>
            descendants(record, "PropertyValue")
              .filter((value) => value.attributes.Property === "Name")
              .map((value) => value.attributes.PropertyPath),
          );
      expect(alternateKeys("device")).toContainEqual(["uuid"]);
      expect(alternateKeys("device_tag")).toContainEqual(["device", "tag_key"]);
      expect(alternateKeys("application")).toContainEqual(["slug"]);
      expect(alternateKeys("organization")).toContainEqual(["handle"]);
      // Exactly the registry's keys other than id.
      for (const resource of model.resources.values()) {
        const expected = resource.keys
          .filter((key) => !(key.length === 1 && key[0] === "id"))
          .map((key) => [...key]);
        expect(alternateKeys(resource.name).sort(), resource.name).toEqual(expected.sort());
      }
    });

    it("agrees with the database: every stored Property has the column's Edm type and nullability", async () => {
      const columns = await server.test.db.query<{
        table_name: string;
        column_name: string;
        data_type: string;
        is_nullable: string;
      }>({
        text: "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema()",
        values: [],
      });
      const byName = new Map(columns.map((c) => [`${c.table_name}.${c.column_name}`, c]));
      for (const resource of model.resources.values()) {
        const type = entityType(resource.name);
        for (const element of [
          ...childrenNamed(type, "Property"),
          ...childrenNamed(type, "NavigationProperty"),
        ]) {
          if (element.attributes.Type?.startsWith("Collection(")) continue;
          const name = element.attributes.Name as string;
          const link = name.slice(0, -"__id".length);
          const fieldName = name.endsWith("__id") && resource.navigations.has(link) ? link : name;
          const field = resource.fields.get(fieldName);
          if (field?.computed) continue;
          const where = `${resource.name}.${name}`;
          const column = byName.get(`${resource.table}.${fieldName}`);
          expect(column, where).toBeDefined();
          expect(element.attributes.Nullable, where).toBe(column?.is_nullable === "YES" ? "true" : "false");
          if (element.name === "Property")
            expect(element.attributes.Type, where).toBe(edmOfColumn[column?.data_type ?? ""]);
          else expect(column?.data_type, where).toBe("integer");
        }
      }
    });
  });
});
