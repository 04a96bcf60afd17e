import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type { Row } from "./builder.ts";
import type { GraphQLContext } from "./context.ts";
import { readRows } from "./read.ts";

// The id every batched row is read under, apart from the fields the query selected.
const ID_KEY = "$id";

/**
 * Rows by id that the plan of their root field cannot include, such as the device named in each
 * of a command's results. All lookups of one field in one request are batched by DataLoader into
 * one plan and one statement (`id in (…)`, the caller's permissions, the field's selection).
 */
export class RowLoaders {
  // One loader per field of the query: graphql-js hands every list item the same fieldNodes.
  private readonly loaders = new WeakMap<readonly FieldNode[], DataLoader<number, Row | null>>();

  load(context: GraphQLContext, resource: string, id: number, info: GraphQLResolveInfo): Promise<Row | null> {
    let loader = this.loaders.get(info.fieldNodes);
    if (!loader) {
      loader = new DataLoader((ids) => this.batch(context, resource, ids, info));
      this.loaders.set(info.fieldNodes, loader);
    }
    return loader.load(id);
  }

  private async batch(
    context: GraphQLContext,
    resource: string,
    ids: readonly number[],
    info: GraphQLResolveInfo,
  ) {
    const { core } = context;
    const selection = core.selection.selection(core.graph.objectOf(resource), info.fieldNodes, info);
    core.selection.charge(context.cost, selection, ids.length);
    const rows = await readRows(context, {
      resource,
      count: false,
      options: {
        ...selection,
        select: [...(selection.select ?? []), { path: ["id"], as: ID_KEY }],
        filter: {
          kind: "in",
          operand: { kind: "path", segments: ["id"] },
          values: ids.map((id) => ({ kind: "number", value: id })),
        },
      },
    });
    const byId = new Map(rows.map((found) => [found[ID_KEY], found]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
