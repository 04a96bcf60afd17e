import { describe, expect, it } from "vitest";
import { hasComputedSql } from "../../src/core/sql/computed.ts";
import datamodel from "../../src/generated/datamodel.json" with { type: "json" };
import { buildModel, type Datamodel } from "../../src/model/registry.ts";

describe("the model registry", () => {
  const model = buildModel();

  it("has SQL for every computed field it declares", () => {
    const computed = [...model.resources.values()].flatMap((resource) =>
      [...resource.fields.values()]
        .filter((field) => field.computed)
        .map((field) => [resource.table, field.name] as const),
    );
    expect(computed.length).toBeGreaterThan(0);
    for (const [table, field] of computed)
      expect(hasComputedSql(table, field), `${table}.${field}`).toBe(true);
  });

  it("exposes no hidden column", () => {
    expect(model.resources.get("user")?.fields.has("password")).toBe(false);
    expect(model.resources.get("user")?.fields.has("jwt_secret")).toBe(false);
    expect(model.resources.get("api_key")?.fields.has("key_hash")).toBe(false);
    expect(model.resources.get("device")?.fields.has("supervisor_api_key_ciphertext")).toBe(false);
  });

  it("refuses a foreign key whose reverse navigation has no name", () => {
    const source = structuredClone(datamodel) as unknown as Datamodel;
    const device = source.models.find((model) => model.dbName === "device");
    device?.fields.push({
      name: "extra__application",
      kind: "scalar",
      type: "Int",
      isRequired: false,
      isUnique: false,
      isId: false,
      hasDefaultValue: false,
    });
    device?.fields.push({
      name: "Extra",
      kind: "object",
      type: "Application",
      isRequired: false,
      isUnique: false,
      isId: false,
      hasDefaultValue: false,
      relationFromFields: ["extra__application"],
      relationToFields: ["id"],
    });
    expect(() => buildModel(source)).toThrow(/name the reverse navigation of device\.extra__application/);
  });
});
