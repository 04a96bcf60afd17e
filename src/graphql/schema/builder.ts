import SchemaBuilder from "@pothos/core";
import { GraphQLError, Kind } from "graphql";
import { JSONResolver } from "graphql-scalars";
import type { GraphQLContext } from "../context.ts";
import type { Row } from "./graphql-model.ts";

export interface SchemaTypes {
  Context: GraphQLContext;
  Scalars: {
    DateTime: { Input: Date; Output: string | Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}

type Types = PothosSchemaTypes.ExtendDefaultTypes<SchemaTypes>;
export type Builder = PothosSchemaTypes.SchemaBuilder<Types>;

// Pothos types refs by their TypeScript shapes; these types are generated from the registry at run
// time, so every row is a Row and the generated field maps are cast once, where they are built.
export type ObjectRef = PothosSchemaTypes.ImplementableObjectRef<Types, Row>;
export type InputRef = PothosSchemaTypes.ImplementableInputObjectRef<Types, Row, Row>;

/** Each table's object type and the inputs that read it, by the type's name (objects.ts). */
export interface ObjectRefs {
  readonly objects: ReadonlyMap<string, ObjectRef>;
  readonly wheres: ReadonlyMap<string, InputRef>;
  readonly orderBys: ReadonlyMap<string, InputRef>;
}

/** The GraphQL scalar of each of the model's scalar types. */
export const scalarOf = {
  Integer: "Int",
  Text: "String",
  Boolean: "Boolean",
  DateTime: "DateTime",
  JSON: "JSON",
} as const;

function parseDateTime(value: unknown): Date {
  const date = typeof value === "string" ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime()))
    throw new GraphQLError(`DateTime must be an ISO 8601 string, not ${JSON.stringify(value)}`);
  return date;
}

export function createBuilder(): Builder {
  const builder = new SchemaBuilder<SchemaTypes>({ defaultFieldNullability: false });
  // The database already sends timestamps as ISO 8601 text (as OData does); they pass through.
  builder.scalarType("DateTime", {
    description: "An instant as an ISO 8601 string in UTC, e.g. 2026-11-22T10:00:00.000Z",
    // Code generators and clients read the format here (RFC 3339's date-time, a profile of ISO 8601).
    specifiedByURL: "https://www.rfc-editor.org/rfc/rfc3339#section-5.6",
    serialize: (value) => (value instanceof Date ? value.toISOString() : value),
    parseValue: parseDateTime,
    parseLiteral: (node) => parseDateTime(node.kind === Kind.STRING ? node.value : undefined),
  });
  builder.addScalarType("JSON", JSONResolver);
  builder.queryType({});
  builder.mutationType({});
  return builder;
}
