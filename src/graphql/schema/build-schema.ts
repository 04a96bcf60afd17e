import type { GraphQLSchema } from "graphql";
import type { Model } from "../../model/types.ts";
import type { ObjectRef } from "./builder.ts";
import { createBuilder } from "./builder.ts";
import { GraphQLModel } from "./graphql-model.ts";
import { mutationFields } from "./mutation-fields.ts";
import { objectTypes } from "./objects.ts";
import { queryFields } from "./query-fields.ts";
import { subscriptionFields } from "./subscriptions.ts";
import { supervisorFields } from "./supervisor-fields.ts";

/** The whole GraphQL schema, generated from the model registry. */
export function buildSchema(graph: GraphQLModel): GraphQLSchema {
  const builder = createBuilder();
  const refs = objectTypes(builder, graph);
  queryFields(builder, graph, refs);
  mutationFields(builder, graph, refs);
  supervisorFields(
    builder,
    refs.objects.get("Device") as ObjectRef,
    refs.objects.get("CommandJob") as ObjectRef,
  );
  subscriptionFields(builder, graph, refs);
  return builder.toSchema();
}

export function schemaOf(model: Model): GraphQLSchema {
  return buildSchema(new GraphQLModel(model));
}
