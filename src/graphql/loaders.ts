import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import { idIn, type ODataQuery } from "../core/query.ts";
import type { RequestCost, SelectionPlanner } from "./selection.ts";
import type { GraphQLModel, Row } from "./types.ts";

/** What a batch needs of the request: how to plan a selection, and what it has cost so far. */
interface LoaderContext {
  readonly core: { readonly graph: GraphQLModel; readonly selection: SelectionPlanner };
  readonly cost: RequestCost;
}

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

  /** `read`: the request's read path (its caller's permissions). */
  constructor(private readonly read: (query: ODataQuery) => Promise<Row[]>) {}

  load(context: LoaderContext, resource: string, id: number, info: GraphQLResolveInfo): Promise<Row | null> {
    let loader = this.loaders.get(info.fieldNodes);
    if (!loader) {
      loader = new DataLoader((ids) => this.batch(context, resource, ids, info));
      this.loaders.set(info.fieldNodes, loader);
    }
    return loader.load(id);
  }

  private async batch(
    context: LoaderContext,
    resource: string,
    ids: readonly number[],
    info: GraphQLResolveInfo,
  ) {
    const { core } = context;
    const selection = core.selection.selection(core.graph.objectOf(resource), info.fieldNodes, info);
    core.selection.charge(context.cost, selection, ids.length);
    const rows = await this.read({
      resource,
      count: false,
      options: {
        ...selection,
        select: [...(selection.select ?? []), { path: ["id"], as: ID_KEY }],
        filter: idIn(ids),
      },
    });
    const byId = new Map(rows.map((found) => [found[ID_KEY], found]));
    return ids.map((id) => byId.get(id) ?? null);
  }
}
