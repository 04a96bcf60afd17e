import { keyArguments, listArguments } from "./arguments.ts";
import type { Builder, ObjectRefs } from "./builder.ts";
import type { GraphQLModel, Row } from "./graphql-model.ts";
import { keyOf, readCount, readList, readOne, readRootRows, selectOne } from "./read.ts";
import { rootNames } from "./root-fields.ts";
import type { ListArguments } from "./selection.ts";

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
