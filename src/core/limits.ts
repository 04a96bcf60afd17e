import { BadRequest } from "../errors.ts";
import type { Planned, ReadPlan, SelectPlan } from "./plan-types.ts";

/** What one OData read may ask of the database (ODATA_MAX_COST and its neighbours in the README). */
export interface ReadLimits {
  /** The most rows a request could produce, over every level of its expansions. */
  readonly maxCost: number;
  /** What a collection or to-many expansion without `$top` counts as. It is not cut to this. */
  readonly unboundedRows: number;
  /** How deeply `$expand` may nest. */
  readonly maxExpandDepth: number;
  /** The reads of one `$batch` together: each read is charged its cost before it runs. */
  readonly budget?: CostBudget;
}

/**
 * What the reads of one `$batch` may cost together (ODATA_BATCH_MAX_COST): each is charged its
 * planned cost before it runs, and the first one that would take the total over the limit is
 * refused, as is every read after it in the batch. The cost comes from the plan (the URL, the
 * model, `$top`), never from rows, so a refusal tells nothing of what the caller cannot read.
 */
export class CostBudget {
  private spent = 0;
  private exceeded = false;

  constructor(private readonly limit: number) {}

  charge(cost: number): void {
    if (this.exceeded || this.spent + cost > this.limit) {
      this.exceeded = true;
      throw new BadRequest(
        `The reads of this batch could produce more than ${this.limit} rows together (ODATA_BATCH_MAX_COST): this read (up to ${cost} rows) and every read after it in the batch are not run; the reads before it could produce up to ${this.spent}`,
      );
    }
    this.spent += cost;
  }
}

export const defaultReadLimits: ReadLimits = {
  maxCost: 10_000_000_000,
  unboundedRows: 1000,
  maxExpandDepth: 5,
};

/**
 * Refuses, before anything runs, a read that could produce more rows than the cost limit or nests
 * `$expand` deeper than the depth limit. The cost is counted as GraphQL counts its own: each level
 * produces its `$top` rows (one for a to-one expansion or a lookup by key, `unboundedRows` with no
 * `$top`) for every row of its parent, summed over the levels. Nothing is truncated: pinejs clients
 * expect whole expansions, so a request over the limit is a 400 that says where to add `$top`.
 */
export function checkReadLimits(plan: ReadPlan, limits: ReadLimits): void {
  if (plan.kind !== "collection") {
    // A count produces no rows, but after a batch's refusal it is not run either.
    limits.budget?.charge(0);
    return;
  }
  const levels = measure(plan.select, limits, { path: "", rows: 1, depth: 0, toOne: false });
  const deepest = levels.reduce((a, b) => (b.depth > a.depth ? b : a));
  if (deepest.depth > limits.maxExpandDepth) {
    throw new BadRequest(
      `$expand nests ${deepest.depth} levels deep (${deepest.path}), more than the limit of ${limits.maxExpandDepth} (ODATA_MAX_EXPAND_DEPTH)`,
    );
  }
  const cost = levels.reduce((sum, level) => sum + level.rows, 0);
  if (cost > limits.maxCost) {
    const unbounded = levels.filter((level) => level.unbounded && level.depth > 0).map((level) => level.path);
    const advice =
      unbounded.length > 0
        ? `add $top to ${unbounded.join(", ")}`
        : "ask for fewer rows with smaller $top values";
    throw new BadRequest(
      `This request could produce up to ${cost} rows, more than the limit of ${limits.maxCost} (ODATA_MAX_COST); a collection or expansion without $top counts as ${limits.unboundedRows} rows: ${advice}`,
    );
  }
  limits.budget?.charge(cost);
}

interface Level {
  /** The navigation path from the root (`belongs_to__application/owns__device`); "" for the root. */
  readonly path: string;
  /** The rows this level could produce in all. */
  readonly rows: number;
  readonly depth: number;
  /** A to-many level without `$top` and not pinned to one row by a key. */
  readonly unbounded: boolean;
}

function measure(
  select: SelectPlan,
  limits: ReadLimits,
  at: { path: string; rows: number; depth: number; toOne: boolean },
): Level[] {
  const pinned = at.toOne || pinsKey(select);
  const perParent = pinned ? 1 : (select.top ?? limits.unboundedRows);
  const unbounded = !pinned && select.top === undefined;
  const rows = at.rows * perParent;
  const levels: Level[] = [{ path: at.path || select.table.resource.name, rows, depth: at.depth, unbounded }];
  for (const item of select.output) {
    if (item.kind !== "expand" && item.kind !== "expandCount") continue;
    const path = at.path ? `${at.path}/${item.join.navigation.name}` : item.join.navigation.name;
    if (item.kind === "expandCount") {
      // A number per parent row: no rows of its own, but a level of $expand.
      levels.push({ path, rows: 0, depth: at.depth + 1, unbounded: false });
      continue;
    }
    const toOne = item.join.navigation.cardinality === "one";
    levels.push(...measure(item.select, limits, { path, rows, depth: at.depth + 1, toOne }));
  }
  return levels;
}

/** Whether the conditions pin every field of one of the table's keys to a literal (`id eq 5`). */
function pinsKey(select: SelectPlan): boolean {
  const fields = new Set<string>();
  const collect = (condition: Planned) => {
    if (condition.kind === "logical" && condition.op === "and") condition.operands.forEach(collect);
    if (condition.kind !== "comparison" || condition.op !== "eq") return;
    const [column, literal] =
      condition.left.kind === "column"
        ? [condition.left, condition.right]
        : [condition.right, condition.left];
    if (column.kind === "column" && column.table === select.table && literal.kind === "literal") {
      fields.add(column.field.name);
    }
  };
  select.where.forEach(collect);
  return select.table.resource.keys.some((key) => key.every((field) => fields.has(field)));
}
