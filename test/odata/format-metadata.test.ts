import { beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { useDemoServer } from "../support/demo-server.ts";
import { childrenNamed, descendants, only, parseXml, type XmlElement } from "../support/odata/xml.ts";

// The CSDL document at /v6/$metadata, read element by element and checked against the model
// registry and the database's columns (./csdl.test.ts checks it against the CSDL rules).

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
  const demo = useDemoServer(kind);
  const { get } = demo;

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
          // Computed too: what no caller writes, which the server assigns (issue 47).
          const writable = [...resource.writability.create, ...resource.writability.update].includes(
            field.name,
          );
          expect(computed, `${resource.name}.${field.name} Computed`).toBe(field.computed || !writable);
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
      const columns = await demo.server.test.db.query<{
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
