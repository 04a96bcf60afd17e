import { keyArguments } from "./arguments.ts";
import type { Builder, InputRef, ObjectRefs } from "./builder.ts";
import { type GraphQLModel, type ObjectSpec, pascalCase, plural, type Row } from "./graphql-model.ts";
import { selectOne } from "./read.ts";
import { type WhereInput, WhereTranslator } from "./where.ts";
import { type InputMember, inputMembers, inputType, toModelNames } from "./write-inputs.ts";
import { writeResult, writeResultType } from "./write-results.ts";
import { createOne, deleteOne, deleteWhere, updateOne, updateWhere } from "./writes.ts";

// Each table's mutations, as its writability allows: `create…`, `update…` (one by a key, or every
// row `where` matches) and `delete…` (the same two). Their resolvers are writes.ts.

/** What the mutations of one table are built from. */
interface TableMutations {
  readonly builder: Builder;
  readonly graph: GraphQLModel;
  readonly spec: ObjectSpec;
  /** The table's object type, which a mutation of one row answers with. */
  readonly type: never;
  readonly where: InputRef;
  /** The `WriteResult` type a bulk write answers with. */
  readonly result: ReturnType<typeof writeResultType>;
  /** `Device`, and `Devices` for the bulk writes. */
  readonly name: string;
  readonly names: string;
}

export function mutationFields(builder: Builder, graph: GraphQLModel, refs: ObjectRefs): void {
  const result = writeResultType(builder);
  for (const spec of graph.objects.values()) {
    const table: TableMutations = {
      builder,
      graph,
      spec,
      type: refs.objects.get(spec.name) as never,
      where: refs.wheres.get(spec.name) as InputRef,
      result,
      name: pascalCase(spec.resource.name),
      names: pascalCase(plural(spec.resource.name)),
    };
    const { writability } = spec.resource;
    const creatable = inputMembers(spec.resource, writability.create);
    const patchable = inputMembers(spec.resource, writability.update);
    if (creatable.length > 0) createField(table, creatable);
    if (patchable.length > 0) updateFields(table, patchable);
    if (writability.deletable) deleteFields(table);
  }
}

/** The filter of a bulk write's `where`, translated when the write asks for it (writes.ts). */
const filterOf = (table: TableMutations, where: unknown) => () =>
  new WhereTranslator(table.graph).filter(table.spec, where as WhereInput);

function createField(table: TableMutations, creatable: readonly InputMember[]): void {
  const { builder, spec, type, name } = table;
  const resource = spec.resource;
  const input = inputType(builder, `${name}CreateInput`, creatable, new Set(resource.writability.required));
  builder.mutationField(`create${name}`, (t) =>
    t.field({
      type,
      nullable: true,
      args: { input: t.arg({ type: input, required: true }) },
      resolve: async (_root, args, context, info) =>
        createOne(
          context,
          resource,
          toModelNames(creatable, args.input as Row),
          selectOne(context, info),
        ) as never,
    }),
  );
}

function updateFields(table: TableMutations, patchable: readonly InputMember[]): void {
  const { builder, spec, type, where, result, name, names } = table;
  const patchInput = inputType(builder, `${name}Patch`, patchable, new Set());
  builder.mutationField(`update${name}`, (t) =>
    t.field({
      type,
      nullable: true,
      args: {
        ...keyArguments(builder, spec, spec.resource),
        patch: t.arg({ type: patchInput, required: true }),
      },
      resolve: async (_root, args, context, info) => {
        const { patch, ...keyArgs } = args as Row;
        const body = toModelNames(patchable, patch as Row);
        return updateOne(context, spec, keyArgs, body, () => selectOne(context, info)) as never;
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
        const body = toModelNames(patchable, args.patch as Row);
        const written = await updateWhere(context, spec.resource, filterOf(table, args.where), body, dryRun);
        return writeResult(spec, written, dryRun);
      },
    }),
  );
}

function deleteFields(table: TableMutations): void {
  const { builder, spec, type, where, result, name, names } = table;
  builder.mutationField(`delete${name}`, (t) =>
    t.field({
      type,
      nullable: true,
      description: `Deletes one ${spec.name}; answers with it as it was`,
      args: keyArguments(builder, spec, spec.resource),
      resolve: async (_root, args, context, info) =>
        deleteOne(context, spec, args as Row, () => selectOne(context, info)) as never,
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
        const written = await deleteWhere(context, spec.resource, filterOf(table, args.where), dryRun);
        return writeResult(spec, written, dryRun);
      },
    }),
  );
}
