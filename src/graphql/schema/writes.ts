import { credentialTables } from "../../auth/caller.ts";
import { asWriter } from "../../auth/request-context.ts";
import type { Expr, Key, QueryOptions } from "../../core/query.ts";
import {
  createEntity,
  deleteEntities,
  updateEntities,
  type WriteContext,
  type WriteOutcome,
} from "../../core/write/write.ts";
import { NotFound } from "../../errors.ts";
import type { Resource } from "../../model/types.ts";
import type { GraphQLContext } from "../context.ts";
import type { ObjectSpec, Row } from "./graphql-model.ts";
import { keyOf, readOne, readRows } from "./read.ts";

// Mutations call the same write core as OData's POST, PATCH and DELETE: validation, business rules,
// permissions and the transaction are written once. Each function here is one mutation's resolver
// after its arguments were read: `selected` is what it answers with, planned (and charged) before
// anything is written.

/** The write core under the caller's permissions (a row they may not change is its Forbidden). */
async function asCaller<T>(
  context: GraphQLContext,
  resource: Resource,
  work: (write: WriteContext) => Promise<T>,
) {
  // Outside the try: no credential is a 401, not a refusal of these rows.
  const { caller, permissions } = asWriter(context);
  try {
    return await work({ db: context.core.db, model: context.core.model, permissions, actor: caller.actor });
  } finally {
    if (credentialTables.has(resource.table)) context.core.identitiesChanged();
  }
}

const byId = (id: number): Key => ({ kind: "id", value: { kind: "number", value: id } });

/** `create…`: the row created, as the caller may read it. */
export async function createOne(
  context: GraphQLContext,
  resource: Resource,
  body: Row,
  selected: QueryOptions,
): Promise<Row | null> {
  const id = await asCaller(context, resource, (write) => createEntity(resource.name, body, write));
  return readOne(context, resource.name, byId(id), selected);
}

/**
 * `update…` of one row by a key: the id of the row the key names, as the caller sees it, then an
 * update by id (a key such as a handle, a slug or a tag key may change with the write itself), and
 * the row read back after it.
 */
export async function updateOne(
  context: GraphQLContext,
  spec: ObjectSpec,
  keyArgs: Row,
  patch: Row,
  selected: () => QueryOptions,
): Promise<Row | null> {
  const resource = spec.resource;
  // No credential is a 401 before anything is looked up (not the NOT_FOUND of what it cannot see).
  asWriter(context);
  const options = selected();
  // By id from here on: the patch may change the key the row was named by.
  const [found] = await readRows(context, {
    resource: resource.name,
    key: keyOf(spec, resource.keys, keyArgs),
    count: false,
    options: { select: ["id"] },
  });
  const id = found?.id as number | undefined;
  if (id === undefined) throw new NotFound(`No ${spec.name} with that key`);
  const written = await asCaller(context, resource, (write) =>
    updateEntities({ resource: resource.name, key: byId(id) }, patch, write),
  );
  if (written.affected === 0) throw new NotFound(`No ${spec.name} with that key`);
  return readOne(context, resource.name, byId(id), options);
}

/**
 * `update…s`: every row the caller may change among those `filter` matches, in one transaction.
 * The filter is translated once the caller may write: without a credential, a 401 whatever it says.
 */
export function updateWhere(
  context: GraphQLContext,
  resource: Resource,
  filter: () => Expr | undefined,
  patch: Row,
  dryRun: boolean,
): Promise<WriteOutcome> {
  return asCaller(context, resource, (write) =>
    updateEntities({ resource: resource.name, filter: filter() }, patch, write, { dryRun }),
  );
}

/** `delete…` of one row by a key: the row as it was. */
export async function deleteOne(
  context: GraphQLContext,
  spec: ObjectSpec,
  keyArgs: Row,
  selected: () => QueryOptions,
): Promise<Row> {
  const resource = spec.resource;
  asWriter(context);
  const key = keyOf(spec, resource.keys, keyArgs);
  const before = await readOne(context, resource.name, key, selected());
  if (!before) throw new NotFound(`No ${spec.name} with that key`);
  await asCaller(context, resource, (write) => deleteEntities({ resource: resource.name, key }, write));
  return before;
}

/** `delete…s`: as `update…s`, deleting the rows. */
export function deleteWhere(
  context: GraphQLContext,
  resource: Resource,
  filter: () => Expr | undefined,
  dryRun: boolean,
): Promise<WriteOutcome> {
  return asCaller(context, resource, (write) =>
    deleteEntities({ resource: resource.name, filter: filter() }, write, { dryRun }),
  );
}
