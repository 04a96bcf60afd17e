import type { GraphQLResolveInfo } from "graphql";
import { asReader } from "../../auth/request-context.ts";
import type { Key, Literal, ODataQuery, QueryOptions } from "../../core/query.ts";
import { compileQuery, type ReadContext, readRows as readCoreRows } from "../../core/read.ts";
import { BadRequest } from "../../errors.ts";
import type { GraphQLContext } from "../context.ts";
import type { ObjectSpec, Row } from "./graphql-model.ts";
import type { ListArguments } from "./selection.ts";

// Every root field is one read plan, whatever its selection below; the root fields of a query
// operation run together as one SQL statement (`context.reads`, execution/root-reads.ts).

export function readContext(context: GraphQLContext): ReadContext {
  const { db, model, statementCache } = context.core;
  return {
    db,
    model,
    permissions: asReader(context).permissions,
    format: "v4",
    ...(statementCache ? { statementCache } : {}),
  };
}

/** The rows a (v6) query reads, under the caller's permissions: one plan, one statement. */
export function readRows(context: GraphQLContext, query: ODataQuery): Promise<Row[]> {
  return readCoreRows<Row>(query, readContext(context));
}

/** The rows a root query field reads: planned and compiled now, run with the operation's other root reads. */
export function readRootRows(context: GraphQLContext, query: ODataQuery): Promise<Row[]> {
  return rootRows(query, readContext(context), context.reads);
}

// Async, as the core's readRows is: a planning error rejects, it does not throw.
async function rootRows(
  query: ODataQuery,
  context: ReadContext,
  reads: GraphQLContext["reads"],
): Promise<Row[]> {
  const { json } = await reads.read(compileQuery(query, context));
  return JSON.parse(json) as Row[];
}

/** A root list field's rows: its selection and arguments, charged with the whole operation. */
export function readList(
  context: GraphQLContext,
  resource: string,
  info: GraphQLResolveInfo,
): Promise<Row[]> {
  const options = context.core.selection.rootOptions(context.cost, info);
  return readRootRows(context, { resource, count: false, options });
}

/**
 * What a single-row root field selects, charged with the whole operation (before a mutation writes
 * anything).
 */
export function selectOne(context: GraphQLContext, info: GraphQLResolveInfo): QueryOptions {
  return context.core.selection.rootOptions(context.cost, info);
}

/**
 * One row by a key (`id`, or another unique field), or null when the caller cannot see it: read on
 * its own (a mutation's answer), or by a root query field with the operation's other root reads.
 */
export async function readOne(
  context: GraphQLContext,
  resource: string,
  key: Key,
  options: QueryOptions,
  read: typeof readRows = readRows,
): Promise<Row | null> {
  const [found] = await read(context, { resource, key, count: false, options });
  return found ?? null;
}

/**
 * What a batch of lookups by id of `resource`'s rows reads for the field of `info` (execution/loaders.ts):
 * the field's selection, charged to the request for `rows` rows.
 */
export function batchOptions(
  context: GraphQLContext,
  resource: string,
  info: GraphQLResolveInfo,
  rows: number,
): QueryOptions {
  const { graph, selection } = context.core;
  const options = selection.selection(graph.objectOf(resource), info.fieldNodes, info);
  selection.charge(context.cost, options, rows);
  return options;
}

/** A root `…Count` field: how many rows match, run with the operation's other root reads. */
export async function readCount(
  context: GraphQLContext,
  resource: string,
  spec: ObjectSpec,
  where: ListArguments["where"],
): Promise<number> {
  const query = countQuery(context, resource, spec, where);
  const { count } = await context.reads.read(compileQuery(query, readContext(context)));
  return count ?? 0;
}

/** The query of a root `…Count` field. */
export function countQuery(
  context: GraphQLContext,
  resource: string,
  spec: ObjectSpec,
  where: ListArguments["where"],
): ODataQuery {
  const { filter } = context.core.selection.listOptions(spec, { where });
  return { resource, count: true, options: filter ? { filter } : {} };
}

// GraphQL name → field name of each object's fields and links, made once per object.
const fieldNames = new WeakMap<ObjectSpec, Map<string, string>>();

function fieldNamesOf(spec: ObjectSpec): Map<string, string> {
  let names = fieldNames.get(spec);
  if (!names) {
    names = new Map();
    for (const [name, member] of spec.members) {
      if (member.kind === "field" || member.kind === "link") names.set(name, member.field.name);
    }
    fieldNames.set(spec, names);
  }
  return names;
}

/** The key among the arguments (`device(uuid: "…")`): exactly one of the resource's keys, whole. */
export function keyOf(spec: ObjectSpec, resourceKeys: readonly (readonly string[])[], args: Row): Key {
  const given = Object.entries(args).filter(([, value]) => value !== undefined && value !== null);
  const names = fieldNamesOf(spec);
  const fields = given.map(([name]) => names.get(name) as string);
  const isKey = resourceKeys.some(
    (key) => key.length === fields.length && key.every((f) => fields.includes(f)),
  );
  if (!isKey) {
    const keys = resourceKeys.map((key) =>
      key.map((f) => [...names].find(([, n]) => n === f)?.[0]).join(" + "),
    );
    throw new BadRequest(`Give exactly one key of ${spec.name}: ${keys.join(", or ")}`);
  }
  const values = given.map(([name, value]) => [names.get(name) as string, literalOf(value)] as const);
  return { kind: "fields", values };
}

function literalOf(value: unknown): Literal {
  if (typeof value === "number") return { kind: "number", value };
  if (typeof value === "boolean") return { kind: "boolean", value };
  if (value instanceof Date) return { kind: "datetime", value };
  return { kind: "text", value: String(value) };
}
