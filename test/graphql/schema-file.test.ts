import { readFileSync } from "node:fs";
import { type GraphQLObjectType, printSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { schemaOf } from "../../src/graphql/schema/build-schema.ts";
import { buildModel } from "../../src/model/registry.ts";

describe("schema.graphql", () => {
  it("is the schema the server builds (run `npm run schema` after changing the model or src/graphql)", () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    expect(committed).toBe(`${printSchema(schemaOf(buildModel()))}\n`);
  });

  it("specifies DateTime (issue 47: code generators then know its format)", () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    expect(committed).toMatch(
      /^scalar DateTime @specifiedBy\(url: "https:\/\/www\.rfc-editor\.org\/rfc\/rfc3339#section-5\.6"\)$/m,
    );
  });

  it("shows a field of the model in both surfaces: every device field is a Device field", () => {
    const device = buildModel().resources.get("device");
    const schema = schemaOf(buildModel());
    const fields = Object.keys((schema.getType("Device") as GraphQLObjectType).getFields());
    for (const name of device?.fields.keys() ?? []) {
      const camel = name.replace(/_+([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
      expect(fields).toContain(device?.fields.get(name)?.link ? `${camel}Id` : camel);
    }
  });
});
