import { credentialTables } from "../auth/caller.ts";
import { asWriter } from "../auth/request-context.ts";
import type { Key } from "../core/query.ts";
import {
  type Change,
  createEntity,
  deleteEntities,
  updateEntities,
  type WriteContext,
  type WriteOutcome,
} from "../core/write/write.ts";
import { NotFound } from "../errors.ts";
import type { Field, Resource } from "../model/types.ts";
import type { Builder } from "./builder.ts";
import type { GraphQLContext } from "./context.ts";
import { camelCase, pascalCase, plural } from "./names.ts";
import { type InputRef, type ObjectRefs, scalarOf } from "./objects.ts";
import { keyArguments } from "./queries.ts";
import { keyOf, readOne, readRows, selectOne } from "./read.ts";
import type { GraphQLModel, ObjectSpec, Row } from "./types.ts";
import { type WhereInput, WhereTranslator } from "./where.ts";

// Mutations call the same write core as OData's POST, PATCH and DELETE: validation, business rules,
// permissions and the transaction are written once. Inputs use the GraphQL names; they are turned
// back into the model's names here and nowhere else.

/** An input member: its GraphQL name and the model field behind it (a foreign key takes `…Id`). */
function inputMembers(resource: Resource, names: readonly string[]): [string, Field][] {
  return names.flatMap((name) => {
    const field = resource.fields.get(name) ?? resource.hiddenFields.get(name);
    return field ? [[field.link ? `${camelCase(name)}Id` : camelCase(name), field] as [string, Field]] : [];
  });
}

/** The input as the write core takes a body: model names, and a DateTime (a Date here) as ISO 8601 text. */
function toModelNames(members: readonly [string, Field][], input: Row): Row {
  const body: Row = {};
  for (const [name, field] of members) {
    const value = input[name];
    if (value !== undefined) body[field.name] = value instanceof Date ? value.toISOString() : value;
  }
  return body;
}

/** A dry run's rows in GraphQL names: `belongs_to__application: {__id: 5}` is `belongsToApplicationId: 5`. */
function changesInGraphQLNames(spec: ObjectSpec, changes: readonly Change[] | undefined) {
  if (!changes) return null;
  const names = new Map<string, string>();
  for (const [name, member] of spec.members) {
    if (member.kind === "field" || member.kind === "link") names.set(member.field.name, name);
  }
  const rename = (row: Row | null) =>
    row &&
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        names.get(key) ?? key,
        value !== null && typeof value === "object" && "__id" in value ? value.__id : value,
      ]),
    );
  return changes.map((change) => ({
    id: change.id,
    before: rename(change.before),
    after: rename(change.after),
  }));
}

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

/**
 * The id of the row a key names, as the caller sees it. An update goes by id: a key such as a
 * handle, a slug or a tag key may change with the write itself, and the row is read back after it.
 */
export function mutationFields(builder: Builder, graph: GraphQLModel, refs: ObjectRefs): void {
  const change = builder.objectRef<Row>("WriteChange").implement({
    description: "One row of a dry run: the fields a write changes, before and after",
    fields: (t) => ({
      id: t.int({ resolve: (row) => row.id as number }),
      before: t.field({ type: "JSON", nullable: true, resolve: (row) => row.before }),
      after: t.field({ type: "JSON", nullable: true, resolve: (row) => row.after }),
    }),
  });
  const result = builder.objectRef<Row>("WriteResult").implement({
    description: "What a bulk write changed (or, in a dry run, would change)",
    fields: (t) => ({
      affected: t.int({ resolve: (row) => row.affected as number }),
      dryRun: t.boolean({ resolve: (row) => row.dryRun as boolean }),
      changes: t.field({
        type: [change],
        nullable: true,
        description: "Each row before and after; dry runs only",
        resolve: (row) => row.changes as Row[] | null,
      }),
    }),
  });
  const outcome = (spec: ObjectSpec, written: WriteOutcome, dryRun: boolean) => ({
    affected: written.affected,
    dryRun,
    changes: changesInGraphQLNames(spec, written.changes),
  });

  /** An input of writable fields, a foreign key by its id; the required ones non-null. */
  const inputType = (name: string, members: readonly [string, Field][], required: ReadonlySet<string>) =>
    builder.inputRef<Row, false>(name).implement({
      fields: (t) =>
        Object.fromEntries(
          members.map(([member, field]) => [
            member,
            t.field({ type: field.link ? "Int" : scalarOf[field.type], required: required.has(field.name) }),
          ]),
        ) as never,
    });

  for (const spec of graph.objects.values()) {
    const resource = spec.resource;
    const type = refs.objects.get(spec.name) as never;
    const where = refs.wheres.get(spec.name) as InputRef;
    const name = pascalCase(resource.name);
    const names = pascalCase(plural(resource.name));
    const creatable = inputMembers(resource, resource.writability.create);
    const patchable = inputMembers(resource, resource.writability.update);
    const filterOf = (input: WhereInput) => new WhereTranslator(graph).filter(spec, input);

    if (creatable.length > 0) {
      const input = inputType(`${name}CreateInput`, creatable, new Set(resource.writability.required));
      builder.mutationField(`create${name}`, (t) =>
        t.field({
          type,
          nullable: true,
          args: { input: t.arg({ type: input, required: true }) },
          resolve: async (_root, args, context, info) => {
            const selected = selectOne(context, info);
            const id = await asCaller(context, resource, (write) =>
              createEntity(resource.name, toModelNames(creatable, args.input as Row), write),
            );
            return (await readOne(context, resource.name, byId(id), selected)) as never;
          },
        }),
      );
    }

    if (patchable.length > 0) {
      const patchInput = inputType(`${name}Patch`, patchable, new Set());
      builder.mutationField(`update${name}`, (t) =>
        t.field({
          type,
          nullable: true,
          args: {
            ...keyArguments(builder, spec, resource),
            patch: t.arg({ type: patchInput, required: true }),
          },
          resolve: async (_root, args, context, info) => {
            // No credential is a 401 before anything is looked up (not the NOT_FOUND of what it cannot see).
            asWriter(context);
            const { patch: given, ...keyArgs } = args as Row;
            const selected = selectOne(context, info);
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
              updateEntities(
                { resource: resource.name, key: byId(id) },
                toModelNames(patchable, given as Row),
                write,
              ),
            );
            if (written.affected === 0) throw new NotFound(`No ${spec.name} with that key`);
            return (await readOne(context, resource.name, byId(id), selected)) as never;
          },
        }),
      );
      builder.mutationField(`update${names}`, (t) =>
        t.field({
          type: result,
          description: `Changes every ${spec.name} row the caller may change among those \`where\` matches, in one transaction`,
          args: {
            where: t.arg({ type: where, required: true }),
            patch: t.arg({ type: patchInput, required: true }),
            dryRun: t.arg.boolean({ description: "Report what would change; change nothing" }),
          },
          resolve: async (_root, args, context) => {
            const dryRun = args.dryRun === true;
            const written = await asCaller(context, resource, (write) =>
              updateEntities(
                { resource: resource.name, filter: filterOf(args.where as WhereInput) },
                toModelNames(patchable, args.patch as Row),
                write,
                { dryRun },
              ),
            );
            return outcome(spec, written, dryRun);
          },
        }),
      );
    }

    if (resource.writability.deletable) {
      builder.mutationField(`delete${name}`, (t) =>
        t.field({
          type,
          nullable: true,
          description: `Deletes one ${spec.name}; answers with it as it was`,
          args: keyArguments(builder, spec, resource),
          resolve: async (_root, args, context, info) => {
            asWriter(context);
            const key = keyOf(spec, resource.keys, args as Row);
            const before = await readOne(context, resource.name, key, selectOne(context, info));
            if (!before) throw new NotFound(`No ${spec.name} with that key`);
            await asCaller(context, resource, (write) =>
              deleteEntities({ resource: resource.name, key }, write),
            );
            return before as never;
          },
        }),
      );
      builder.mutationField(`delete${names}`, (t) =>
        t.field({
          type: result,
          description: `Deletes every ${spec.name} row the caller may change among those \`where\` matches, in one transaction`,
          args: {
            where: t.arg({ type: where, required: true }),
            dryRun: t.arg.boolean({ description: "Report what would be deleted; delete nothing" }),
          },
          resolve: async (_root, args, context) => {
            const dryRun = args.dryRun === true;
            const written = await asCaller(context, resource, (write) =>
              deleteEntities({ resource: resource.name, filter: filterOf(args.where as WhereInput) }, write, {
                dryRun,
              }),
            );
            return outcome(spec, written, dryRun);
          },
        }),
      );
    }
  }
}
