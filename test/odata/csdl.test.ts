import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// $metadata against the CSDL rules, read by the OASIS OData TC's own tools: odata-csdl converts the
// XML strictly (an element, attribute or name the CSDL XML schema does not allow is an error) and
// ships the CSDL JSON schema the result must satisfy. What neither checks (references between
// elements: types, partners, constraints, bindings) is checked here on its output.

const require = createRequire(import.meta.url);
const { xml2json } = require("odata-csdl") as {
  xml2json(xml: string, options: { strict: boolean; annotations: boolean }): Csdl;
};
const csdlSchema = require("odata-csdl/schemas/csdl.schema.json") as object;
const Ajv = (require("ajv") as { default: new (options: object) => AjvInstance }).default;

interface AjvInstance {
  compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
}

type Member = Record<string, unknown> & { $Kind?: string; $Type?: string };
type Csdl = Record<string, unknown> & { $EntityContainer: string };

const capabilities = "@Org.OData.Capabilities.V1";
// The roots that answer $batch (src/odata/batch/).
const batchRoots: readonly string[] = ["odata"];

describe.each(databaseKinds)("$metadata as CSDL on %s", (kind) => {
  let server: TestServer;
  const csdl = new Map<string, Csdl>();

  beforeAll(async () => {
    server = await startTestServer(kind);
    for (const version of ["v6", "v7", "v5", "v1", "odata"]) {
      const response = await server.app.inject({ method: "GET", url: `/${version}/$metadata` });
      expect(response.statusCode, response.body).toBe(200);
      csdl.set(version, xml2json(response.body, { strict: true, annotations: true }));
    }
  });
  afterAll(() => server.close());

  const schemaOf = (document: Csdl) => document.fleetgate as Record<string, Member>;
  const entityTypes = (document: Csdl) =>
    Object.entries(schemaOf(document)).filter(([, member]) => member.$Kind === "EntityType");

  it.each(["v6", "v7", "v5", "v1", "odata"])(
    "%s: satisfies the CSDL JSON schema of the OData TC",
    (version) => {
      const validate = new Ajv({ strict: false, allErrors: true }).compile(csdlSchema);
      const document = csdl.get(version);
      expect(validate(document), JSON.stringify(validate.errors, null, 1)?.slice(0, 2000)).toBe(true);
    },
  );

  it.each(["v6", "v7", "v5", "v1", "odata"])(
    "%s: every navigation's type, partner and referential constraint resolves",
    (version) => {
      const document = csdl.get(version) as Csdl;
      const types = new Map(entityTypes(document));
      let partners = 0;
      let constraints = 0;
      for (const [name, type] of types) {
        for (const [memberName, member] of Object.entries(type)) {
          if (
            member === null ||
            typeof member !== "object" ||
            (member as Member).$Kind !== "NavigationProperty"
          )
            continue;
          const navigation = member as Member & {
            $Collection?: boolean;
            $Partner?: string;
            $ReferentialConstraint?: Record<string, string>;
          };
          const where = `${version} ${name}.${memberName}`;
          const targetName = String(navigation.$Type).replace(/^fleetgate\./, "");
          const target = types.get(targetName);
          expect(target, where).toBeDefined();
          if (navigation.$Partner !== undefined) {
            partners++;
            const partner = target?.[navigation.$Partner] as typeof navigation | undefined;
            expect(partner?.$Kind, `${where} partner`).toBe("NavigationProperty");
            expect(partner?.$Type, `${where} partner type`).toBe(`fleetgate.${name}`);
            expect([undefined, memberName], `${where} partner's partner`).toContain(partner?.$Partner);
            expect(Boolean(partner?.$Collection), `${where} one side is many`).not.toBe(
              Boolean(navigation.$Collection),
            );
          }
          for (const [property, referenced] of Object.entries(navigation.$ReferentialConstraint ?? {})) {
            constraints++;
            const own = type[property] as Member | undefined;
            expect(own?.$Kind, `${where} constraint property ${property}`).toBeUndefined();
            expect(own?.$Type ?? "Edm.String", `${where} ${property} type`).toBe("Edm.Int32");
            expect((target?.[referenced] as Member | undefined)?.$Type, `${where} ${referenced}`).toBe(
              "Edm.Int32",
            );
          }
        }
      }
      expect(partners).toBeGreaterThan(20);
      expect(constraints).toBeGreaterThan(20);
    },
  );

  it("device: belongs_to__application is a navigation on belongs_to__application__id, partner of owns__device", () => {
    const schema = schemaOf(csdl.get("v6") as Csdl);
    const device = schema.device as Record<string, Member>;
    expect(device.belongs_to__application__id).toMatchObject({ $Type: "Edm.Int32" });
    expect(device.belongs_to__application).toMatchObject({
      $Kind: "NavigationProperty",
      $Type: "fleetgate.application",
      $Partner: "owns__device",
      $ReferentialConstraint: { belongs_to__application__id: "id" },
    });
    expect((schema.application as Record<string, Member>).owns__device).toMatchObject({
      $Collection: true,
      $Partner: "belongs_to__application",
    });
  });

  it("each entity set states what it supports, as the model allows it", () => {
    const model = buildModel();
    const container = schemaOf(csdl.get("v6") as Csdl).fleetgate as Record<string, Record<string, unknown>>;
    for (const resource of model.resources.values()) {
      const set = container[resource.name] as Record<string, unknown>;
      const where = resource.name;
      expect(set[`${capabilities}.InsertRestrictions`], where).toEqual({
        Insertable: resource.writability.create.length > 0,
      });
      expect(set[`${capabilities}.UpdateRestrictions`], where).toEqual({
        Updatable: resource.writability.update.length > 0,
      });
      expect(set[`${capabilities}.DeleteRestrictions`], where).toEqual({
        Deletable: resource.writability.deletable,
      });
      expect(set[`${capabilities}.FilterRestrictions`], where).toMatchObject({ Filterable: true });
      expect(set[`${capabilities}.SortRestrictions`], where).toMatchObject({ Sortable: true });
      expect(set[`${capabilities}.ExpandRestrictions`], where).toMatchObject({
        Expandable: resource.navigations.size > 0,
        MaxLevels: 5,
      });
      expect(set[`${capabilities}.CountRestrictions`], where).toEqual({ Countable: true });
    }
    // A JSON document cannot be compared or ordered.
    const command = container.supervisor_command as Record<string, unknown>;
    expect(command[`${capabilities}.SortRestrictions`]).toMatchObject({
      NonSortableProperties: ["data", "results"],
    });
    expect(command[`${capabilities}.FilterRestrictions`]).toMatchObject({
      NonFilterableProperties: ["data", "results"],
    });
    // A device is created through the API.
    expect(container.device?.[`${capabilities}.InsertRestrictions`]).toEqual({ Insertable: true });
  });

  it("an entity set that can be changed names the properties of its ETag (Core.OptimisticConcurrency)", () => {
    const container = schemaOf(csdl.get("v6") as Csdl).fleetgate as Record<string, Record<string, unknown>>;
    const concurrency = "@Org.OData.Core.V1.OptimisticConcurrency";
    const device = container.device?.[concurrency] as string[];
    expect(device).toEqual(
      expect.arrayContaining(["id", "uuid", "device_name", "belongs_to__application__id"]),
    );
    // Computed fields are not part of it.
    expect(device).not.toContain("overall_status");
    // A resource no caller changes has none.
    const model = buildModel();
    for (const resource of model.resources.values()) {
      const changeable = resource.writability.update.length > 0 || resource.writability.deletable;
      expect(container[resource.name]?.[concurrency] !== undefined, resource.name).toBe(changeable);
    }
  });

  it("what the server assigns is Computed and read-only, what is given once Immutable, constant defaults stated", () => {
    const core = "@Org.OData.Core.V1";
    const model = buildModel();
    for (const version of ["odata", "v6"]) {
      const device = schemaOf(csdl.get(version) as Csdl).device as Record<string, Member>;
      for (const name of ["id", "created_at", "actor", "overall_status"]) {
        expect(device[name]?.[`${core}.Computed`], `${version} device.${name}`).toBe(true);
        expect(device[name]?.[`${core}.Permissions`], `${version} device.${name}`).toBe("Read");
      }
      // Given by the caller, or computed by the database when left out.
      expect(device.uuid?.[`${core}.Computed`]).toBeUndefined();
      expect(device.uuid?.[`${core}.ComputedDefaultValue`]).toBe(true);
      expect(device.device_name?.[`${core}.Computed`]).toBeUndefined();
      expect(device.is_online).toMatchObject({ $DefaultValue: false });
      expect(device.api_heartbeat_state).toMatchObject({ $DefaultValue: "unknown" });
    }
    // Every property the write core lets no caller write, in every resource.
    const schema = schemaOf(csdl.get("v6") as Csdl);
    for (const resource of model.resources.values()) {
      const type = schema[resource.name] as Record<string, Member>;
      for (const field of resource.fields.values()) {
        const name = field.link && resource.navigations.has(field.name) ? `${field.name}__id` : field.name;
        const writable =
          resource.writability.create.includes(field.name) ||
          resource.writability.update.includes(field.name);
        const where = `${resource.name}.${name}`;
        expect(type[name]?.[`${core}.Computed`] === true, where).toBe(field.computed || !writable);
        const immutable =
          resource.writability.create.includes(field.name) &&
          !resource.writability.update.includes(field.name);
        expect(type[name]?.[`${core}.Immutable`] === true, where).toBe(!field.computed && immutable);
      }
    }
  });

  it("says exactly what is supported: no $search anywhere; $batch only where it is answered", () => {
    for (const version of ["v6", "v7", "odata"]) {
      const container = schemaOf(csdl.get(version) as Csdl).fleetgate as Record<string, unknown>;
      for (const [name, set] of Object.entries(container)) {
        if (typeof set !== "object" || set === null || !("$Type" in set)) continue;
        expect((set as Record<string, unknown>)[`${capabilities}.SearchRestrictions`], name).toEqual({
          Searchable: false,
        });
      }
      expect(container[`${capabilities}.BatchSupported`], version).toBe(batchRoots.includes(version));
    }
  });
});
