import type { Permissions } from "../auth/permissions.ts";
import { type Fragment, ident } from "../db/sql.ts";
import { BadRequest, NotFound } from "../errors.ts";
import type { Model, Resource } from "../model/types.ts";
import { ExprPlanner, type Scope } from "./plan-expr.ts";
import type {
  Format,
  Join,
  OrderTerm,
  OutputItem,
  Planned,
  PlannedByKeys,
  ReadPlan,
  SelectPlan,
  TableRef,
} from "./plan-types.ts";
import type { Key, ODataQuery, QueryOptions, ReadAnswer } from "./query.ts";
import { Tables } from "./tables.ts";

export interface PlanContext {
  readonly model: Model;
  readonly permissions: Permissions;
  readonly format: Format;
  /**
   * The server reads the rows itself, on the caller's behalf, and no client sees them: `$select`
   * may name hidden columns (where the proxy reaches a device, a catalogue entry's whole document)
   * and `MAY_WRITE`. The rows are still the caller's: their permission predicates stay.
   */
  readonly system?: boolean;
}

/** In a system read's `$select`: whether the caller may also change the row (a boolean). */
export const MAY_WRITE = "@may_write";

export function resolveResource(model: Model, name: string): Resource {
  const resource = model.resources.get(name);
  if (!resource) throw new NotFound(`Unknown resource '${name}'`);
  return resource;
}

/** Resolves a (v6) query against the model into the plan the SQL compiler takes. */
export function planRead(query: ODataQuery, context: PlanContext): ReadPlan {
  const tables = new Tables(context.model, context.permissions, query.versionFields);
  const planner = new SelectPlanner(tables, new ExprPlanner(tables), context);
  const table = tables.add(resolveResource(context.model, query.resource), {
    single: query.key !== undefined,
  });
  const scope: Scope = { table, variables: new Map() };
  const where = [
    ...(query.key ? [planner.key(table, query.key)] : []),
    ...(query.options.filter ? [planner.exprs.boolean(query.options.filter, scope, "$filter")] : []),
  ];
  if (query.count) return { kind: "count", table, where };
  const answer = query.answer?.kind === "byKeys" ? plannedByKeys(query.answer, planner, scope) : query.answer;
  return {
    kind: "collection",
    format: context.format,
    select: planner.select(table, query.options, where),
    ...(answer ? { answer } : {}),
  };
}

/** A `byKeys` answer as the compiler takes it: its field planned as the rows' key. */
function plannedByKeys(
  { field, ...answer }: Extract<ReadAnswer, { kind: "byKeys" }>,
  planner: SelectPlanner,
  scope: Scope,
): PlannedByKeys {
  return { ...answer, key: planner.exprs.path({ kind: "path", segments: [field] }, scope) };
}

export interface WriteTargetPlan {
  readonly table: TableRef;
  readonly where: readonly Planned[];
  /** The caller's write predicate for the target table; the table's own `permission` is the read one. */
  readonly writable: Fragment;
}

/** The rows a PATCH, PUT or DELETE names (by key or $filter), as the read path would find them. */
export function planWriteTarget(query: ODataQuery, context: Omit<PlanContext, "format">): WriteTargetPlan {
  const plan = planRead({ ...query, count: true }, { ...context, format: "pinejs" });
  if (plan.kind !== "count") throw new Error("a count plan was expected");
  const rows = { single: query.key !== undefined };
  return {
    ...plan,
    writable: context.permissions.writable(plan.table.resource, ident(plan.table.alias), rows),
  };
}

class SelectPlanner {
  constructor(
    private readonly tables: Tables,
    readonly exprs: ExprPlanner,
    private readonly context: Pick<PlanContext, "permissions" | "system">,
  ) {}

  key(table: TableRef, key: Key): Planned {
    const resource = table.resource;
    const values = key.kind === "id" ? [["id", key.value] as const] : key.values;
    const names = values.map(([name]) => name);
    const isKey = resource.keys.some(
      (fields) => fields.length === names.length && fields.every((field) => names.includes(field)),
    );
    if (!isKey) throw new BadRequest(`(${names.join(", ")}) is not a key of ${resource.name}`);
    const scope: Scope = { table, variables: new Map() };
    const conjuncts = values.map(([name, literal]) =>
      this.exprs.plan(
        { kind: "comparison", op: "eq", left: { kind: "path", segments: [name] }, right: literal },
        scope,
      ),
    );
    return conjuncts.length === 1
      ? (conjuncts[0] as Planned)
      : { kind: "logical", type: "Boolean", op: "and", operands: conjuncts };
  }

  select(table: TableRef, options: QueryOptions, where: readonly Planned[]): SelectPlan {
    const scope: Scope = { table, variables: new Map() };
    return {
      table,
      where,
      output: this.output(table, options),
      orderBy: this.orderBy(scope, options),
      top: options.top,
      skip: options.skip,
      inlineCount: options.count === true,
    };
  }

  private output(table: TableRef, options: QueryOptions): OutputItem[] {
    const resource = table.resource;
    const items =
      options.select ??
      [...resource.fields.values()].filter((field) => field.selectedByDefault).map((field) => field.name);
    const output: OutputItem[] = items.map((item) => {
      if (typeof item !== "string" && "constant" in item) {
        const text = { kind: "text", value: item.constant } as const;
        return { kind: "value", key: item.as, value: { kind: "literal", type: "Text", literal: text } };
      }
      if (typeof item !== "string" && "etag" in item) return { kind: "etag", key: item.as, table };
      if (typeof item !== "string" && "idBetween" in item) return idBetween(table, item.idBetween, item.as);
      const [name, ...through] = typeof item === "string" ? [item] : item.path;
      const key = typeof item === "string" ? item : item.as;
      if (name === undefined) throw new BadRequest("Empty $select item");
      if (through.length > 0) {
        // A value read through to-one navigations (translated versions only).
        const value = this.exprs.path(
          { kind: "path", segments: [name, ...through] },
          { table, variables: new Map() },
        );
        return { kind: "value", key, value };
      }
      const versionField = this.tables.versionField(resource, name);
      if (versionField) {
        const value = this.exprs.versionValue(table, versionField);
        return versionField.kind === "link"
          ? { kind: "link", key, id: value }
          : { kind: "value", key, value };
      }
      const field =
        resource.fields.get(name) ?? (this.context.system ? resource.hiddenFields.get(name) : undefined);
      if (field?.link) return { kind: "link", key, id: { kind: "column", type: field.type, table, field } };
      if (field) return { kind: "value", key, value: { kind: "column", type: field.type, table, field } };
      if (name === MAY_WRITE && this.context.system) {
        return {
          kind: "writable",
          key,
          predicate: this.context.permissions.writable(resource, ident(table.alias)),
        };
      }
      if (resource.navigations.has(name))
        throw new BadRequest(`'${name}' of ${resource.name} is a collection; use $expand=${name}`);
      throw new BadRequest(`Unknown field '${name}' of ${resource.name} in $select`);
    });
    for (const item of options.expand ?? []) {
      const expansion = this.expansion(table, item.name, item.as ?? item.name, item.count, item.options);
      // An expanded foreign key takes the place of its `{__id}`.
      const at = output.findIndex((existing) => existing.key === expansion.key);
      if (at >= 0) output[at] = expansion;
      else output.push(expansion);
    }
    return options.keyOrder ? inKeyOrder(output, options.keyOrder) : output;
  }

  private expansion(
    table: TableRef,
    name: string,
    key: string,
    count: boolean,
    options: QueryOptions,
  ): OutputItem {
    const join = this.expansionJoin(table, name);
    const scope: Scope = { table: join.child, variables: new Map() };
    const filter = options.filter ? this.exprs.boolean(options.filter, scope, "$filter") : undefined;
    if (count) {
      const { filter: _filter, ...others } = options;
      if (Object.keys(others).length > 0) throw new BadRequest(`${name}/$count takes only $filter`);
      return { kind: "expandCount", key, join, filter };
    }
    return {
      kind: "expand",
      key,
      join,
      select: this.select(join.child, options, filter ? [filter] : []),
    };
  }

  /** The join of an expansion: a navigation of the model, or a version field's link. */
  private expansionJoin(table: TableRef, name: string): Join {
    const navigation = table.resource.navigations.get(name);
    const join = navigation ? this.tables.join(table, navigation) : this.exprs.versionJoin(table, name);
    if (!join) throw new BadRequest(`Unknown navigation '${name}' of ${table.resource.name} in $expand`);
    return join;
  }

  private orderBy(scope: Scope, options: QueryOptions): OrderTerm[] {
    const terms: OrderTerm[] = (options.orderby ?? []).map((item) => {
      const value = this.exprs.path(item.path, scope);
      if (value.type === "JSON" || value.kind === "lambda") {
        throw new BadRequest(`Cannot order by ${item.path.segments.join("/")}`);
      }
      return { value, direction: item.direction };
    });
    // A stable order makes $top/$skip pages deterministic: the id breaks every tie.
    const id = scope.table.resource.fields.get("id");
    const byId = terms.some(
      (term) =>
        term.value.kind === "column" && term.value.field.name === "id" && term.value.table === scope.table,
    );
    if (id && !byId)
      terms.push({
        value: { kind: "column", type: id.type, table: scope.table, field: id },
        direction: "asc",
      });
    return terms;
  }
}

/** `before || id || after`: PostgreSQL writes the integer id as text for `||`. */
function idBetween(table: TableRef, [before, after]: readonly [string, string], key: string): OutputItem {
  const id = table.resource.fields.get("id");
  if (!id) throw new Error(`${table.resource.name} has no id to write between texts`);
  const text = (value: string): Planned => ({
    kind: "literal",
    type: "Text",
    literal: { kind: "text", value },
  });
  const call = (args: Planned[]): Planned => ({ kind: "call", type: "Text", name: "concat", args });
  const value = call([
    call([text(before), { kind: "column", type: id.type, table, field: id }]),
    text(after),
  ]);
  return { kind: "value", key, value };
}

/** `output` in the order of `keys`; keys not named there keep their order, after the others. */
function inKeyOrder(output: OutputItem[], keys: readonly string[]): OutputItem[] {
  const rank = new Map(keys.map((key, i) => [key, i]));
  const of = (item: OutputItem) => rank.get(item.key) ?? keys.length;
  return output.sort((a, b) => of(a) - of(b));
}
