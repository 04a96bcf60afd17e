import {
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLIncludeDirective,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  isListType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { ExpandItem, OrderItem, QueryOptions, SelectItem } from "../../core/query.ts";
import { BadRequest } from "../../errors.ts";
import type { GraphQLModel, Member, ObjectSpec } from "./graphql-model.ts";
import { throughField } from "./nested-errors.ts";
import { type WhereInput, WhereTranslator } from "./where.ts";

/** What a resolver knows of the operation, enough to read the selection below a field. */
export interface Operation {
  readonly schema: GraphQLSchema;
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  readonly variableValues: Readonly<Record<string, unknown>>;
}

/** An operation and its root type: what a resolver's `info` knows of them, or a request's own. */
export interface RootOperation extends Operation {
  readonly operation: OperationDefinitionNode;
  readonly parentType: GraphQLObjectType;
}

/** What one request has been charged so far (see SelectionPlanner.charge). */
export interface RequestCost {
  rows: number;
  /** Its operation's root fields, planned and charged together before the first of them read. */
  roots?: RootPlans;
}

/** The options of each root field that reads rows, by response key; or why it cannot run. */
type RootPlans = ReadonlyMap<string, QueryOptions | Error>;

/** An operation's root fields that read rows: their plans, their arguments and the rows they could read. */
export interface RootFieldPlans {
  readonly plans: RootPlans;
  readonly args: ReadonlyMap<string, Record<string, unknown>>;
  readonly rows: number;
}

/** The arguments of a list field: `where`, `orderBy`, `first`, `offset`. */
export interface ListArguments {
  readonly where?: WhereInput | null;
  readonly orderBy?: readonly Readonly<Record<string, unknown>>[] | null;
  readonly first?: number | null;
  readonly offset?: number | null;
}

/** The key a relation's value is sent under in the row JSON: its response key, apart from fields' names. */
export const relationKey = (responseKey: string): string => `$${responseKey}`;

/**
 * How the rows a selection reads are keyed. `fields`, for the resolvers: scalar fields under their
 * GraphQL names, relations under `relationKey`. `answer`: every value under its response key, in
 * the selection's order, `__typename` included, so the row is already GraphQL's answer (execution/answer.ts).
 */
export type RowKeys = "fields" | "answer";

/** PostgreSQL's longest name of a column (NAMEDATALEN - 1 bytes). */
const MAX_COLUMN_NAME = 63;

/**
 * A selection set → OData query options, so a GraphQL field becomes the same plan as a `$select`
 * and `$expand` request: scalar fields are selected under their GraphQL names, relations are
 * expanded (with their own arguments) under their response keys, `…Count` fields are `$count`
 * expansions. The database answers with JSON in the shape GraphQL resolves from.
 */
export class SelectionPlanner {
  /** The object type of each resource, by its GraphQL name. */
  private readonly specs: ReadonlyMap<string, ObjectSpec>;

  constructor(
    private readonly graph: GraphQLModel,
    private readonly maxFirst: number,
    private readonly maxCost: number,
  ) {
    this.specs = new Map([...graph.objects.values()].map((spec) => [spec.name, spec]));
  }

  /**
   * The cost limit: the most rows a request could read, each list counting its `first` (from a
   * literal, a variable, or the default) times its parents', summed over its root fields. A static
   * cost from the document alone cannot see `first` from variables.
   */
  charge(cost: RequestCost, options: QueryOptions, rows: number): void {
    this.add(cost, rowBound(options, rows));
  }

  private add(cost: RequestCost, rows: number): void {
    cost.rows += rows;
    if (cost.rows > this.maxCost) {
      throw new BadRequest(
        `This query could read up to ${cost.rows} rows, more than the limit of ${this.maxCost}; give its lists a smaller \`first\``,
      );
    }
  }

  /**
   * The options of the root field `info` resolves (a list: with its arguments). The first root
   * field of a request plans every root field of the operation, aliases and fragments included, and
   * charges their sum: an operation over the cost limit is refused before any of them reads a row
   * (issue 27: three hundred aliases of one list are three hundred lists).
   */
  rootOptions(cost: RequestCost, info: GraphQLResolveInfo): QueryOptions {
    cost.roots ??= this.planRoots(cost, info);
    const planned = cost.roots.get(String(info.path.key));
    if (planned instanceof Error) throw planned;
    if (!planned) throw new Error(`${info.parentType.name}.${info.fieldName} reads no rows`);
    return planned;
  }

  /**
   * Plans and charges an operation's root fields before its first resolver runs
   * (execution/document-limits.ts), which then finds them planned; the refusal when the operation is
   * over the cost limit.
   */
  chargeOperation(cost: RequestCost, root: RootOperation): Error | undefined {
    cost.roots ??= this.planRoots(cost, root);
    if (cost.rows <= this.maxCost) return undefined;
    const refused = cost.roots.values().next().value;
    return refused instanceof Error ? refused : undefined;
  }

  private planRoots(cost: RequestCost, root: RootOperation): RootPlans {
    const { plans, rows } = this.planRootFields(root, "fields");
    return this.chargeRoots(cost, plans, rows);
  }

  /**
   * Charges root fields planned elsewhere (the database's answer, execution/answer.ts): when they
   * are over the cost limit, the request is refused without planning them a second time.
   */
  refuseOverCost(cost: RequestCost, planned: RootFieldPlans): boolean {
    if (this.fits(cost, planned.rows)) return false;
    cost.roots ??= this.chargeRoots(cost, planned.plans, planned.rows);
    return true;
  }

  private chargeRoots(cost: RequestCost, plans: RootPlans, rows: number): RootPlans {
    try {
      this.add(cost, rows);
    } catch (refused) {
      return new Map([...plans.keys()].map((key) => [key, refused as Error]));
    }
    return plans;
  }

  /**
   * The options of each root field of `root` that reads rows (counts and commands read none of
   * their own), by response key, or the field's own error; and the most rows they could read.
   */
  planRootFields(root: RootOperation, keys: RowKeys): RootFieldPlans {
    const plans = new Map<string, QueryOptions | Error>();
    const args = new Map<string, Record<string, unknown>>();
    let rows = 0;
    for (const [responseKey, nodes] of collectFields([root.operation.selectionSet], root)) {
      const definition = root.parentType.getFields()[(nodes[0] as FieldNode).name.value];
      const spec = definition && this.specs.get(getNamedType(definition.type).name);
      if (!definition || !spec) continue;
      const list = isListType(getNullableType(definition.type));
      try {
        const values = getArgumentValues(definition, nodes[0] as FieldNode, root.variableValues);
        args.set(responseKey, values);
        const options = list
          ? this.options(spec, nodes, root, values, keys)
          : this.selection(spec, nodes, root, keys);
        rows += rowBound(options, list ? (options.top ?? 1) : 1);
        plans.set(responseKey, options);
      } catch (error) {
        // A field's own mistake (a bad `first`, `where`) is its error, not the operation's.
        plans.set(responseKey, error as Error);
      }
    }
    return { plans, args, rows };
  }

  /** Whether reading `rows` rows more than `cost` stays within the limit. */
  fits(cost: RequestCost, rows: number): boolean {
    return cost.rows + rows <= this.maxCost;
  }

  options(
    spec: ObjectSpec,
    nodes: readonly FieldNode[],
    operation: Operation,
    args: ListArguments,
    keys: RowKeys = "fields",
  ): QueryOptions {
    const where = new WhereTranslator(this.graph);
    return { ...this.selection(spec, nodes, operation, keys), ...this.listOptions(spec, args, where) };
  }

  /** `first`, `offset`, `orderBy` and `where` as `$top`, `$skip`, `$orderby` and `$filter`. */
  listOptions(spec: ObjectSpec, args: ListArguments, where = new WhereTranslator(this.graph)): QueryOptions {
    const first = args.first ?? undefined;
    const offset = args.offset ?? undefined;
    if (first !== undefined && (first < 0 || first > this.maxFirst))
      throw new BadRequest(`first must be between 0 and ${this.maxFirst}`);
    if (offset !== undefined && offset < 0) throw new BadRequest("offset cannot be negative");
    const filter = where.filter(spec, args.where);
    const orderby = args.orderBy
      ? args.orderBy.map((item, i) => this.order(spec, item, [], `orderBy[${i}]`))
      : [];
    return {
      top: first ?? this.maxFirst,
      ...(offset !== undefined ? { skip: offset } : {}),
      ...(filter ? { filter } : {}),
      ...(orderby.length > 0 ? { orderby } : {}),
    };
  }

  /** Only the selection (to-one relations and single rows take no list arguments). */
  selection(
    spec: ObjectSpec,
    nodes: readonly FieldNode[],
    operation: Operation,
    keys: RowKeys = "fields",
  ): QueryOptions {
    const type = operation.schema.getType(spec.name) as GraphQLObjectType;
    const select: SelectItem[] = [];
    const expand: ExpandItem[] = [];
    const selected = new Set<string>();
    const selectionSets = nodes.map((node) => node.selectionSet);
    const fieldsByKey = collectFields(selectionSets, operation);
    for (const [responseKey, fields] of fieldsByKey) {
      const node = fields[0] as FieldNode;
      const name = node.name.value;
      // PostgreSQL cuts a column's name to 63 bytes (GraphQL names are ASCII): such an answer is
      // left to the resolvers.
      if (keys === "answer" && responseKey.length > MAX_COLUMN_NAME)
        throw new Error(`${responseKey} is too long a key for an answer by the database`);
      if (name === "__typename") {
        if (keys === "answer") select.push({ constant: spec.name, as: responseKey });
        continue;
      }
      const member = spec.members.get(name);
      if (!member) throw new Error(`${spec.name}.${name} has no member`);
      if (member.kind === "field" || member.kind === "link") {
        const as = keys === "answer" ? responseKey : name;
        if (!selected.has(as)) select.push({ path: [member.field.name], as });
        selected.add(as);
        continue;
      }
      const definition = type.getFields()[name];
      if (!definition) throw new Error(`${spec.name}.${name} is not in the schema`);
      try {
        const args = getArgumentValues(definition, node, operation.variableValues) as ListArguments;
        expand.push(this.expansion(member, responseKey, fields, operation, args, keys));
      } catch (error) {
        // Its own path, not its root field's (nested-errors.ts).
        throw throughField(error, responseKey, fields);
      }
    }
    if (keys === "answer") return { select, expand, keyOrder: [...fieldsByKey.keys()] };
    // A row must have at least one column; `id` costs nothing.
    if (select.length === 0 && expand.length === 0) select.push({ path: ["id"], as: "id" });
    return { select, expand };
  }

  private expansion(
    member: Exclude<Member, { kind: "field" | "link" }>,
    responseKey: string,
    fields: readonly FieldNode[],
    operation: Operation,
    args: ListArguments,
    keys: RowKeys,
  ): ExpandItem {
    const target = this.graph.objectOf(member.target);
    const as = keys === "answer" ? responseKey : relationKey(responseKey);
    const base = { name: member.navigation.name, as };
    switch (member.kind) {
      case "toOne":
        return { ...base, count: false, options: this.selection(target, subfields(fields), operation, keys) };
      case "toMany":
        return {
          ...base,
          count: false,
          options: {
            ...this.selection(target, subfields(fields), operation, keys),
            ...this.listOptions(target, args),
          },
        };
      case "count": {
        const filter = new WhereTranslator(this.graph).filter(target, args.where);
        return { ...base, count: true, options: filter ? { filter } : {} };
      }
    }
  }

  /** `{deviceName: DESC}` or, through a to-one relation, `{belongsToApplication: {appName: ASC}}`. */
  private order(
    spec: ObjectSpec,
    item: Readonly<Record<string, unknown>>,
    prefix: string[],
    at: string,
  ): OrderItem {
    const entries = Object.entries(item).filter(([, value]) => value !== undefined && value !== null);
    const [entry, ...more] = entries;
    if (!entry || more.length > 0) throw new BadRequest(`${at} must name exactly one field`);
    const [name, value] = entry;
    const member = spec.members.get(name);
    if (member?.kind === "toOne") {
      const target = this.graph.objectOf(member.target);
      return this.order(
        target,
        value as Record<string, unknown>,
        [...prefix, member.navigation.name],
        `${at}.${name}`,
      );
    }
    if (member?.kind !== "field" && member?.kind !== "link")
      throw new BadRequest(`Cannot order by ${at}.${name}`);
    return {
      path: { kind: "path", segments: [...prefix, member.field.name] },
      direction: value === "DESC" ? "desc" : "asc",
    };
  }
}

/**
 * `rows` rows of a list and the rows of the lists below them: each reads its `$top` per parent row.
 * A to-one relation is a lookup beside its parent row, not a list of its own.
 */
function rowBound(options: QueryOptions, rows: number): number {
  return (options.expand ?? []).reduce((total, item) => {
    if (item.count) return total;
    const top = item.options.top;
    return (
      total + (top === undefined ? rowBound(item.options, rows) - rows : rowBound(item.options, rows * top))
    );
  }, rows);
}

function subfields(fields: readonly FieldNode[]): FieldNode[] {
  return fields.flatMap((field) => (field.selectionSet ? [field] : []));
}

function included(node: { directives?: readonly unknown[] }, operation: Operation): boolean {
  if (!node.directives?.length) return true;
  const skip = getDirectiveValues(GraphQLSkipDirective, node as FieldNode, operation.variableValues);
  if (skip?.if === true) return false;
  const include = getDirectiveValues(GraphQLIncludeDirective, node as FieldNode, operation.variableValues);
  return include?.if !== false;
}

/**
 * The fields of `selectionSets`, grouped by response key, through fragments and `@skip`/`@include`
 * (as graphql-js collects them; every resource type is a concrete object type, so a fragment's
 * type condition always matches once validation passed).
 */
export function collectFields(
  selectionSets: readonly (SelectionSetNode | undefined)[],
  operation: Operation,
): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const visited = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (!included(selection, operation)) continue;
      switch (selection.kind) {
        case Kind.FIELD: {
          const key = selection.alias?.value ?? selection.name.value;
          fields.set(key, [...(fields.get(key) ?? []), selection]);
          break;
        }
        case Kind.INLINE_FRAGMENT:
          visit(selection.selectionSet);
          break;
        case Kind.FRAGMENT_SPREAD: {
          const name = selection.name.value;
          if (visited.has(name)) break;
          visited.add(name);
          visit(operation.fragments[name]?.selectionSet);
          break;
        }
      }
    }
  };
  selectionSets.forEach(visit);
  return fields;
}
