import SchemaBuilder from "@pothos/core";
import { GraphQLError, Kind } from "graphql";
import { JSONResolver } from "graphql-scalars";
import type { GraphQLContext } from "./context.ts";

export interface SchemaTypes {
  Context: GraphQLContext;
  Scalars: {
    DateTime: { Input: Date; Output: string | Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}

export type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<SchemaTypes>>;

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
