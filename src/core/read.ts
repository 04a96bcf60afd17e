import type { Executor, Statement } from "../db/database.ts";
import { checkReadLimits, type ReadLimits } from "./limits.ts";
import { type PlanContext, planRead } from "./plan.ts";
import type { ReadPlan } from "./plan-types.ts";
import type { ODataQuery } from "./query.ts";
import { queryShape, withSlotValues } from "./query-shape.ts";
import { compileRead } from "./sql/compile.ts";
import type { StatementCache } from "./statement-cache.ts";

/** What the statement of a read answers: rows (`body`, and `count` with an inline count) or a count. */
export interface ReadShape {
  readonly kind: ReadPlan["kind"];
  /** A collection's `$count=true`: its statement has a `count` column beside `body`. */
  readonly inlineCount: boolean;
  /** An `entity` answer (ODataQuery's `answer`): `body` is one entity's object, or null. */
  readonly entity?: boolean;
  /** An `at` answer's: how many values and types its statement reads. */
  readonly at?: { readonly values: number; readonly types: number };
}

/** Compiled reads by query shape (./query-shape.ts), with what each statement answers. */
export type QueryStatementCache = StatementCache<ReadShape>;

export interface ReadContext extends PlanContext {
  readonly db: Executor;
  /** The cost and depth limits, checked before the statement runs when given. */
  readonly limits?: ReadLimits;
  /** Reuses the statements of queries of the same shape, for callers whose permissions have a `cacheKey`. */
  readonly statementCache?: QueryStatementCache;
}

/** A read statement, ready to run, and whether it reads rows or counts them. */
export interface CompiledRead extends ReadShape {
  readonly statement: Statement;
}

export interface ReadResult {
  readonly kind: ReadPlan["kind"];
  /** The rows as JSON array text (`[]` for a count), passed on unparsed where a surface can. */
  readonly json: string;
  /** `/$count`, or the inline count `$count=true` asked for. */
  readonly count: number | undefined;
  /** A `page` answer's: whether more entities follow the page. */
  readonly more?: boolean;
  /** An `entity` answer's ETag, when the query reads one. */
  readonly etag?: string;
  /** An `at` answer's values (JSON texts) and types, in the order of its paths; null where none is. */
  readonly at?: { readonly values: (string | null)[]; readonly types: (string | null)[] };
}

/** Plan (model + permissions) → limits → compile. */
function compileFresh(query: ODataQuery, context: Omit<ReadContext, "db">): CompiledRead {
  const plan = planRead(query, context);
  if (context.limits) checkReadLimits(plan, context.limits);
  const inlineCount = plan.kind === "collection" && plan.select.inlineCount;
  const answer = plan.kind === "collection" ? plan.answer : undefined;
  const at =
    answer?.kind === "at" ? { at: { values: answer.values.length, types: answer.types.length } } : {};
  return {
    kind: plan.kind,
    inlineCount,
    entity: answer?.kind === "entity",
    ...at,
    statement: compileRead(plan),
  };
}

/**
 * The statement a query reads with, not yet run: from the statements of its shape when this
 * caller read one before, else planned and compiled (and learnt).
 */
export function compileQuery(query: ODataQuery, context: Omit<ReadContext, "db">): CompiledRead {
  const { statementCache, permissions } = context;
  // A read charged to a batch's budget is planned each time: a cached statement skips the charge.
  if (!statementCache || permissions.cacheKey === undefined || context.limits?.budget)
    return compileFresh(query, context);
  const shape = queryShape(query);
  // Everything else the statement depends on: the caller, the format, a system read, the limits.
  const key = `${permissions.cacheKey}\n${context.format}\n${context.system === true}\n${JSON.stringify(context.limits)}\n${shape.key}`;
  const { statement, extra } = statementCache.compile(key, shape.slots, (values) => {
    const fresh = compileFresh(values ? withSlotValues(query, values) : query, context);
    const { statement, ...extra } = fresh;
    return { statement, extra };
  });
  return { ...extra, statement };
}

/** A compiled read's statement as the database runs it: a read, which a replica may answer (db/replicas.ts). */
export function asRead(statement: Statement): Statement {
  return statement.readOnly ? statement : { ...statement, readOnly: true };
}

/** Runs a compiled read statement: the one statement of a read. */
export async function runRead(db: Executor, read: CompiledRead): Promise<ReadResult> {
  const [row] = await db.query<{ body?: string; count?: number; more?: boolean; etag?: string }>(
    asRead(read.statement),
  );
  const column = (name: string) => (row as Record<string, string | null> | undefined)?.[name] ?? null;
  const at = read.at && {
    values: Array.from({ length: read.at.values }, (_, i) => column(`value${i}`)),
    types: Array.from({ length: read.at.types }, (_, i) => column(`type${i}`)),
  };
  return {
    kind: read.kind,
    json: row?.body ?? (read.entity ? "null" : "[]"),
    count: read.kind === "count" ? (row?.count ?? 0) : row?.count,
    ...(row?.more === undefined ? {} : { more: row.more }),
    ...(typeof row?.etag === "string" ? { etag: row.etag } : {}),
    ...(at ? { at } : {}),
  };
}

/** The one read path of every surface: plan (model + permissions) → limits → compile → one statement. */
export async function readQuery(query: ODataQuery, context: ReadContext): Promise<ReadResult> {
  return runRead(context.db, compileQuery(query, context));
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
