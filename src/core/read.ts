import type { Executor } from "../db/database.ts";
import { checkReadLimits, type ReadLimits } from "./limits.ts";
import { type PlanContext, planRead } from "./plan.ts";
import type { ReadPlan } from "./plan-types.ts";
import type { ODataQuery } from "./query.ts";
import { compileRead } from "./sql/compile.ts";

export interface ReadContext extends PlanContext {
  readonly db: Executor;
  /** The cost and depth limits, checked before the statement runs when given. */
  readonly limits?: ReadLimits;
}

export interface ReadResult {
  readonly plan: ReadPlan;
  /** The rows as JSON array text (`[]` for a count), passed on unparsed where a surface can. */
  readonly json: string;
  /** `/$count`, or the inline count `$count=true` asked for. */
  readonly count: number | undefined;
}

/** The one read path of every surface: plan (model + permissions) → limits → compile → one statement. */
export async function readQuery(query: ODataQuery, context: ReadContext): Promise<ReadResult> {
  const plan = planRead(query, context);
  if (context.limits) checkReadLimits(plan, context.limits);
  const [row] = await context.db.query<{ body?: string; count?: number }>(compileRead(plan));
  return { plan, json: row?.body ?? "[]", count: plan.kind === "count" ? (row?.count ?? 0) : row?.count };
}

/** The rows a (v6) query reads, parsed. */
export async function readRows<Row = Record<string, unknown>>(
  query: ODataQuery,
  context: ReadContext,
): Promise<Row[]> {
  return JSON.parse((await readQuery(query, context)).json) as Row[];
}

/** How many rows a (v6) query's filter matches. */
export async function readCount(query: ODataQuery, context: ReadContext): Promise<number> {
  return (await readQuery({ ...query, count: true }, context)).count ?? 0;
}
