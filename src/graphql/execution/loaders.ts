import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import { idIn, type ODataQuery, type QueryOptions } from "../../core/query.ts";
import type { Row } from "../schema/graphql-model.ts";

/** How one request's batches read: its read path and its planner (schema/read.ts `batchOptions`). */
export interface BatchReads {
  /** Rows under the request's caller's permissions. */
  read(query: ODataQuery): Promise<Row[]>;
  /** What the field of `info` selects of `resource`'s rows, charged to the request for `rows` rows. */
  options(resource: string, info: GraphQLResolveInfo, rows: number): QueryOptions;
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

  constructor(private readonly reads: BatchReads) {}

  load(resource: string, id: number, info: GraphQLResolveInfo): Promise<Row | null> {
    let loader = this.loaders.get(info.fieldNodes);
    if (!loader) {
      loader = new DataLoader((ids) => this.batch(resource, ids, info));
      this.loaders.set(info.fieldNodes, loader);
    }
    return loader.load(id);
  }

  private async batch(resource: string, ids: readonly number[], info: GraphQLResolveInfo) {
    const selection = this.reads.options(resource, info, ids.length);
    const rows = await this.reads.read({
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
