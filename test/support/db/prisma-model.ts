import { readFileSync } from "node:fs";
import internals from "@prisma/internals";

// The model as Prisma reads schema.prisma, reduced to what a database catalog can show.
export interface ExpectedSchema {
  columns: string[];
  uniques: string[];
  indexes: string[];
  foreignKeys: string[];
}

type DmmfField = {
  name: string;
  kind: string;
  type: string;
  isRequired: boolean;
  hasDefaultValue: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
};
type DmmfModel = { name: string; dbName: string | null; fields: DmmfField[] };
type DmmfIndex = { model: string; type: "id" | "unique" | "normal" | "fulltext"; fields: { name: string }[] };

function columnType(field: DmmfField): string {
  if (field.nativeType?.[0] === "Timestamptz")
    return `timestamp with time zone(${field.nativeType[1][0] ?? 6})`;
  const types: Record<string, string> = {
    Int: "integer",
    String: "text",
    Boolean: "boolean",
    Json: "jsonb",
    DateTime: "timestamp without time zone(3)",
    Float: "double precision",
    BigInt: "bigint",
  };
  const type = types[field.type];
  if (!type) throw new Error(`no column type known for ${field.type}`);
  return type;
}

// What PostgreSQL stores for Prisma's referential actions (pg_constraint.confdeltype).
const onDeleteCodes: Record<string, string> = {
  Cascade: "c",
  SetNull: "n",
  Restrict: "r",
  NoAction: "a",
  SetDefault: "d",
};

/**
 * Unique indexes on expressions, which schema.prisma cannot express (a comment there names each):
 * usernames and e-mail addresses are unique without case (migration 20261202000100).
 */
const expressionUniques = ["user(lower(email))", "user(lower(username))"];

export async function expectedSchema(): Promise<ExpectedSchema> {
  const dmmf = await internals.getDMMF({ datamodel: readFileSync("prisma/schema.prisma", "utf8") });
  const models = dmmf.datamodel.models as unknown as DmmfModel[];
  const table = new Map(models.map((model) => [model.name, model.dbName ?? model.name]));
  const columns: string[] = [];
  const foreignKeys: string[] = [];
  for (const model of models) {
    const name = model.dbName ?? model.name;
    for (const field of model.fields) {
      if (field.kind === "scalar") {
        columns.push(
          `${name}.${field.name} ${columnType(field)} ${field.isRequired ? "not null" : "null"}${field.hasDefaultValue ? " default" : ""}`,
        );
      } else if (field.kind === "object" && field.relationFromFields?.length) {
        const onDelete = field.relationOnDelete ?? (field.isRequired ? "Restrict" : "SetNull");
        foreignKeys.push(
          `${name}(${field.relationFromFields.join(",")}) -> ${table.get(field.type)}(${field.relationToFields?.join(",")}) on delete ${onDeleteCodes[onDelete]}`,
        );
      }
    }
  }
  const indexes = dmmf.datamodel.indexes as unknown as DmmfIndex[];
  const render = (index: DmmfIndex) =>
    `${table.get(index.model)}(${index.fields.map((f) => f.name).join(",")})`;
  return {
    columns: columns.sort(),
    uniques: [
      ...indexes.filter((i) => i.type === "unique" || i.type === "id").map(render),
      ...expressionUniques,
    ].sort(),
    indexes: indexes
      .filter((i) => i.type === "normal")
      .map(render)
      .sort(),
    foreignKeys: foreignKeys.sort(),
  };
}
