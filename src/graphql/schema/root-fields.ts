import type { Resource } from "../../model/types.ts";
import { camelCase, type GraphQLModel, type ObjectSpec, plural } from "./graphql-model.ts";

/** What a root query field of the model reads: one row by a key, a list, or how many rows match. */
export interface RootRead {
  readonly kind: "one" | "list" | "count";
  readonly resource: Resource;
  readonly spec: ObjectSpec;
}

/** The names of a resource's root query fields: `device`, `devices` and `devicesCount`. */
export function rootNames(resource: Resource) {
  const many = camelCase(plural(resource.name));
  return { single: camelCase(resource.name), many, count: `${many}Count` };
}

/**
 * The root query fields that read the model, by name: the fields `queryFields` defines
 * (query-fields.ts), which a query may be answered by the database for (execution/answer.ts).
 */
export function rootReads(graph: GraphQLModel): Map<string, RootRead> {
  const reads = new Map<string, RootRead>();
  for (const resource of graph.model.resources.values()) {
    const spec = graph.objectOf(resource.name);
    const names = rootNames(resource);
    reads.set(names.single, { kind: "one", resource, spec });
    reads.set(names.many, { kind: "list", resource, spec });
    reads.set(names.count, { kind: "count", resource, spec });
  }
  return reads;
}
