import type { Permissions } from "../../auth/permissions.ts";
import type { Database, Executor } from "../../db/database.ts";
import { ident, sql, toStatement } from "../../db/sql.ts";
import { BadRequest, NotFound } from "../../errors.ts";
import type { Model, Resource } from "../../model/types.ts";
import { planWriteTarget, resolveResource } from "../plan.ts";
import { type Expr, idIn, type Key, LinkReference, type ODataQuery, type VersionFields } from "../query.ts";
import { readRows } from "../read.ts";
import { compileWriteTargets } from "../sql/compile.ts";
import { checkCreatable, checkStaysWritable, writeRefused } from "./candidates.ts";
import { checkIfMatch } from "./preconditions.ts";
import { rulesOf } from "./rules/index.ts";
import type { RuleContext } from "./rules/types.ts";
import { columnDefault, columnValue, deleteRows, idsWhere, insertRow, updateRows } from "./statements.ts";
import { type Values, validateBody } from "./values.ts";

export interface WriteContext {
  readonly db: Database;
  readonly model: Model;
  readonly permissions: Permissions;
  readonly actor: number | undefined;
}

/** The rows a PATCH, PUT or DELETE names: one by key, or every row its $filter matches. */
export interface WriteTarget {
  readonly resource: string;
  readonly key?: Key;
  readonly filter?: Expr;
  /** The fields of a translated version that the filter names (`ODataQuery.versionFields`). */
  readonly versionFields?: VersionFields;
  /** If-Match's entity tags (`*` or ETags): the write is made only if the row's ETag is one of them. */
  readonly ifMatch?: readonly string[];
}

export interface Change {
  readonly id: number;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

export interface WriteOutcome {
  /** Rows changed (or, in a dry run, that would change). */
  readonly affected: number;
  /** In a dry run: each row before and after, as a GET would show it (changed fields only for PATCH). */
  readonly changes?: readonly Change[];
}

export interface WriteOptions {
  /** Report what would change, change nothing. */
  readonly dryRun?: boolean;
}

class DryRun extends Error {
  constructor(readonly outcome: WriteOutcome) {
    super("dry run");
  }
}

async function inTransaction<T>(db: Database, work: (tx: Executor) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(work);
  } catch (error) {
    // A database error travels as it is: the one error table maps it (src/core/client-errors.ts).
    if (error instanceof DryRun) return error.outcome as T;
    throw error;
  }
}

const isReleaseOfTag = (resource: Resource, field: string) =>
  resource.table === "release_tag" && field === "release";

/**
 * A foreign key must name a row that exists and that the caller can see. One given by another key
 * (a LinkReference) is looked up and replaced by the row's id.
 */
async function resolveLinks(
  tx: Executor,
  resource: Resource,
  values: Values,
  context: WriteContext,
  resolvedByRules: readonly string[] = [],
): Promise<Values> {
  const resolved: Values = new Map(values);
  for (const [name, value] of values) {
    const field = resource.fields.get(name);
    if (!field?.link || value === null || value === columnDefault || resolvedByRules.includes(name)) continue;
    const target = resolveResource(context.model, field.link);
    const row = ident("linked");
    const [by, wanted] = value instanceof LinkReference ? [value.field, value.value] : ["id", value];
    const [found] = await tx.query<{ id: number }>(
      toStatement(
        sql`SELECT ${row}."id" FROM ${ident(target.table)} ${row}
            WHERE ${row}.${ident(by)} = ${columnValue(target, by, wanted)} AND (${context.permissions.readable(target, row)})`,
      ),
    );
    if (!found) {
      // balena (pinejs) refuses a body naming a fleet or device the caller cannot see as any write
      // they may not make, the same when it does not exist; balena-sdk then looks the fleet or
      // device up and reports it not found. So is the release a release tag is for: the three
      // kinds of tag answer alike.
      if (field.link === "application" || field.link === "device" || isReleaseOfTag(resource, name))
        throw writeRefused(resource);
      const written = value instanceof LinkReference ? `'${value.writtenAs}'` : `'${name}'`;
      throw new BadRequest(
        `${written} refers to ${field.link} ${JSON.stringify(wanted)}, which does not exist`,
      );
    }
    resolved.set(name, found.id);
  }
  return resolved;
}

/** Rows still (or now) outside the caller's write predicate make the whole write fail with nothing changed. */
async function checkWritable(
  tx: Executor,
  resource: Resource,
  ids: readonly number[],
  permissions: Permissions,
) {
  const outside = await idsWhere(
    tx,
    resource,
    ids,
    (row) => sql`(${permissions.writable(resource, row)}) IS NOT TRUE`,
  );
  if (outside.length > 0) throw writeRefused(resource);
}

/** The rows as a GET would show them, read inside the transaction. */
async function snapshot(tx: Executor, resource: Resource, ids: readonly number[], context: WriteContext) {
  const query: ODataQuery = {
    resource: resource.name,
    count: false,
    options: {
      filter: idIn(ids),
    },
  };
  const entities = await readRows(query, { ...context, db: tx, format: "pinejs" });
  return new Map(entities.map((entity) => [entity.id as number, entity]));
}

function ruleContext(tx: Executor, resource: Resource, context: WriteContext): RuleContext {
  return { tx, resource, model: context.model, permissions: context.permissions, actor: context.actor };
}

/**
 * What a POST creates or binds with its entity (OData v4 Protocol §11.4.2.2, deep insert): entities of
 * its to-many navigations, made with their link set to the new entity, and existing entities bound
 * to it, their link changed as a PATCH would. All in the POST's one transaction, each through the
 * same validation, rules and write predicates as a write of its own.
 */
export interface DeepCreate {
  readonly nested?: readonly { readonly navigation: string; readonly entities: readonly NestedEntity[] }[];
  readonly bound?: readonly { readonly navigation: string; readonly ids: readonly number[] }[];
}

export interface NestedEntity {
  readonly body: unknown;
  readonly deep?: DeepCreate;
}

/** POST: validates, applies the resource's rules, inserts, checks the caller may own the result. Returns the new id. */
export async function createEntity(
  resourceName: string,
  body: unknown,
  context: WriteContext,
  deep: DeepCreate = {},
): Promise<number> {
  const resource = resolveResource(context.model, resourceName);
  // Validated before the transaction starts: a malformed body costs no statement.
  const values = validateCreate(resource, body);
  return inTransaction(context.db, (tx) => createIn(tx, resource, values, context, deep));
}

function validateCreate(resource: Resource, body: unknown): Values {
  if (resource.writability.create.length === 0)
    throw new BadRequest(`${resource.name} cannot be created through this API`);
  return validateBody(resource, body, "create", rulesOf(resource.table).coercions);
}

async function createIn(
  tx: Executor,
  resource: Resource,
  values: Values,
  context: WriteContext,
  deep: DeepCreate,
): Promise<number> {
  const rules = rulesOf(resource.table);
  const rulesContext = ruleContext(tx, resource, context);
  const columns = rules.prepareCreate ? await rules.prepareCreate(values, rulesContext) : values;
  const linked = await resolveLinks(tx, resource, columns, context, rules.resolvesLinks);
  // A row its creator comes to own (an organization) is only writable once its rules have run.
  if (!rules.ownedByCreator) await checkCreatable(tx, resource, linked, context.permissions);
  const id = await insertRow(tx, resource, linked);
  await rules.afterCreate?.(values, id, rulesContext);
  await rules.afterWrite?.(values, [id], rulesContext);
  await checkWritable(tx, resource, [id], context.permissions);
  for (const { navigation, entities } of deep.nested ?? []) {
    const { target, field } = childLink(context.model, resource, navigation);
    for (const entity of entities) {
      if (typeof entity.body === "object" && entity.body !== null && field in entity.body) {
        throw new BadRequest(
          `An entity of ${navigation} is linked to the new ${resource.name}: leave out '${field}'`,
        );
      }
      const child =
        typeof entity.body === "object" && entity.body !== null
          ? { ...entity.body, [field]: id }
          : entity.body;
      await createIn(tx, target, validateCreate(target, child), context, entity.deep ?? {});
    }
  }
  for (const { navigation, ids } of deep.bound ?? []) {
    const { target, field } = childLink(context.model, resource, navigation);
    for (const child of ids) {
      const key: Key = { kind: "id", value: { kind: "number", value: child } };
      // A bound entity's link is checked as a PATCH body's would be.
      const values = validateUpdate(target, { [field]: id }, false);
      const { affected } = await updateIn(tx, { resource: target.name, key }, values, context, {});
      if (affected === 0) throw new NotFound(`No ${target.name} ${child} to bind to ${navigation}`);
    }
  }
  return id;
}

/** A to-many navigation whose target rows link back by a field of their own (no link table). */
function childLink(model: Model, resource: Resource, name: string): { target: Resource; field: string } {
  const navigation = resource.navigations.get(name);
  const target = navigation && resolveResource(model, navigation.target);
  const field = navigation && target?.fields.get(navigation.remoteColumn);
  if (navigation?.cardinality !== "many" || navigation.through || !target || !field?.link) {
    throw new BadRequest(
      `${name} of ${resource.name} is not a collection whose entities can be created or bound with it`,
    );
  }
  return { target, field: field.name };
}

/** The target rows, locked: those the caller may read, split by whether they may also write them. */
async function lockTargets(tx: Executor, target: WriteTarget, context: WriteContext) {
  if (!target.key && !target.filter) {
    throw new BadRequest("A PATCH, PUT or DELETE on a collection needs a $filter (or a key) naming its rows");
  }
  const plan = planWriteTarget(
    {
      resource: target.resource,
      count: false,
      options: target.filter ? { filter: target.filter } : {},
      ...(target.key ? { key: target.key } : {}),
      ...(target.versionFields ? { versionFields: target.versionFields } : {}),
    },
    context,
  );
  const rows = await tx.query<{ id: number; may_write: boolean }>(compileWriteTargets(plan));
  const writable = rows.filter((row) => row.may_write).map((row) => row.id);
  // By key, a row the caller sees but may not change is refused; a bulk write just leaves it alone.
  if (target.key && writable.length < rows.length) throw writeRefused(plan.table.resource);
  if (target.ifMatch) {
    if (!target.key) throw new BadRequest("If-Match applies to one entity: write it by its key");
    await checkIfMatch(tx, plan.table.resource, writable, target.ifMatch, context.permissions);
  }
  return { resource: plan.table.resource, ids: writable };
}

function diff(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined) {
  const changedBefore: Record<string, unknown> = {};
  const changedAfter: Record<string, unknown> = {};
  for (const key of Object.keys(after ?? {})) {
    if (JSON.stringify(before?.[key]) !== JSON.stringify(after?.[key])) {
      changedBefore[key] = before?.[key];
      changedAfter[key] = after?.[key];
    }
  }
  return { before: changedBefore, after: changedAfter };
}

/** PATCH (or PUT with `replace`): one UPDATE over every target row, the rules, then the checks. */
export async function updateEntities(
  target: WriteTarget,
  body: unknown,
  context: WriteContext,
  options: WriteOptions & { replace?: boolean } = {},
): Promise<WriteOutcome> {
  const resource = resolveResource(context.model, target.resource);
  const values = validateUpdate(resource, body, options.replace === true);
  return inTransaction(context.db, (tx) => updateIn(tx, target, values, context, options));
}

function validateUpdate(resource: Resource, body: unknown, replace: boolean): Values {
  if (resource.writability.update.length === 0)
    throw new BadRequest(`${resource.name} cannot be changed through this API`);
  const values = validateBody(
    resource,
    body,
    replace ? "replace" : "update",
    rulesOf(resource.table).coercions,
  );
  if (replace) {
    // PUT: every writable stored field the body leaves out goes back to null, or to its default.
    for (const name of resource.writability.update) {
      const field = resource.fields.get(name);
      if (values.has(name) || !field || field.computed) continue;
      if (field.nullable) values.set(name, null);
      else if (field.hasDefault) values.set(name, columnDefault);
    }
  }
  return values;
}

/** A PATCH in a transaction of its own or of a POST that binds entities (`DeepCreate.bound`). */
async function updateIn(
  tx: Executor,
  target: WriteTarget,
  values: Values,
  context: WriteContext,
  options: WriteOptions,
): Promise<WriteOutcome> {
  const resource = resolveResource(context.model, target.resource);
  const rules = rulesOf(resource.table);
  const { ids } = await lockTargets(tx, target, context);
  if (ids.length === 0) return { affected: 0 };
  const before = options.dryRun ? await snapshot(tx, resource, ids, context) : undefined;
  const rulesContext = ruleContext(tx, resource, context);
  const columns = rules.prepareUpdate ? await rules.prepareUpdate(values, ids, rulesContext) : values;
  const linked = await resolveLinks(tx, resource, columns, context, rules.resolvesLinks);
  await checkStaysWritable(tx, resource, linked, ids, context.permissions);
  await updateRows(tx, resource, linked, ids);
  await rules.afterWrite?.(values, ids, rulesContext);
  await checkWritable(tx, resource, ids, context.permissions);
  if (!before) return { affected: ids.length };
  const after = await snapshot(tx, resource, ids, context);
  const changes = ids.map((id) => ({ id, ...diff(before.get(id), after.get(id)) }));
  throw new DryRun({ affected: ids.length, changes });
}

/** DELETE: the target rows go, with whatever the schema cascades to, in one transaction. */
export async function deleteEntities(
  target: WriteTarget,
  context: WriteContext,
  options: WriteOptions = {},
): Promise<WriteOutcome> {
  const resource = resolveResource(context.model, target.resource);
  if (!resource.writability.deletable)
    throw new BadRequest(`${resource.name} cannot be deleted through this API`);
  return inTransaction(context.db, async (tx) => {
    const { ids } = await lockTargets(tx, target, context);
    if (ids.length === 0) return { affected: 0 };
    const before = options.dryRun ? await snapshot(tx, resource, ids, context) : undefined;
    await rulesOf(resource.table).beforeDelete?.(ids, ruleContext(tx, resource, context));
    await deleteRows(tx, resource, ids);
    if (!before) return { affected: ids.length };
    throw new DryRun({
      affected: ids.length,
      changes: ids.map((id) => ({ id, before: before.get(id) ?? null, after: null })),
    });
  });
}
