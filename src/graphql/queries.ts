import type { Resource } from "../model/types.ts";
import type { Builder } from "./builder.ts";
import { camelCase, plural } from "./names.ts";
import { listArguments, type ObjectRefs, scalarOf } from "./objects.ts";
import { keyOf, readCount, readList, readOne, readRootRows, selectOne } from "./read.ts";
import type { ListArguments } from "./selection.ts";
import type { GraphQLModel, ObjectSpec, Row } from "./types.ts";

/** The arguments that name one row: each field of each key of the resource, all optional. */
export function keyArguments(builder: Builder, spec: ObjectSpec, resource: Resource) {
  const keyFields = new Set(resource.keys.flat());
  return builder.args((t) =>
    Object.fromEntries(
      [...spec.members]
        .flatMap(([name, member]) =>
          (member.kind === "field" || member.kind === "link") && keyFields.has(member.field.name)
            ? [[name, member.kind === "link" ? "Int" : scalarOf[member.field.type]] as const]
            : [],
        )
        .map(([name, type]) => [name, t.field({ type: type as "Int" })]),
    ),
  );
}

/** What a root query field of the model reads: one row by a key, a list, or how many rows match. */
export interface RootRead {
  readonly kind: "one" | "list" | "count";
  readonly resource: Resource;
  readonly spec: ObjectSpec;
}

/** The root query fields that read the model, by name: the fields `queryFields` defines. */
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

function rootNames(resource: Resource) {
  const many = camelCase(plural(resource.name));
  return { single: camelCase(resource.name), many, count: `${many}Count` };
}

/** `device(id, uuid)`, `devices(where, orderBy, first, offset)` and `devicesCount(where)` for each resource. */
export function queryFields(builder: Builder, graph: GraphQLModel, refs: ObjectRefs): void {
  for (const resource of graph.model.resources.values()) {
    const spec = graph.objectOf(resource.name);
    const type = refs.objects.get(spec.name) as never;
    const { single, many, count } = rootNames(resource);
    builder.queryFields((t) => ({
      [single]: t.field({
        type,
        nullable: true,
        description: `One ${spec.name} by a key; null when there is none the caller can see`,
        args: keyArguments(builder, spec, resource),
        resolve: (_root, args, context, info) =>
          readOne(
            context,
            resource.name,
            keyOf(spec, resource.keys, args as Row),
            selectOne(context, info),
            readRootRows,
          ) as never,
      }),
      [many]: t.field({
        type: [type],
        args: listArguments(builder, refs, spec),
        resolve: (_root, _args, context, info) => readList(context, resource.name, info) as never,
      }),
      [count]: t.field({
        type: "Int",
        args: { where: t.arg({ type: refs.wheres.get(spec.name) as never }) },
        resolve: (_root, args, context) =>
          readCount(context, resource.name, spec, args.where as ListArguments["where"]),
      }),
    }));
  }
}
