// The OData request after parsing: names are still unresolved strings, literals are typed values,
// and every parser quirk (binds, n-ary nodes, aliases) is gone.

export type Literal =
  /** `real`: written with a decimal point (`2.0`), so it divides as a decimal even when whole. */
  | { readonly kind: "number"; readonly value: number; readonly real?: true }
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "boolean"; readonly value: boolean }
  | { readonly kind: "datetime"; readonly value: Date }
  | { readonly kind: "null" };

export const comparisonOperators = ["eq", "ne", "gt", "ge", "lt", "le"] as const;
export const arithmeticOperators = ["add", "sub", "mul", "div", "mod"] as const;
export type ComparisonOperator = (typeof comparisonOperators)[number];
export type ArithmeticOperator = (typeof arithmeticOperators)[number];

export const functionNames = [
  "contains",
  "startswith",
  "endswith",
  "substringof",
  "tolower",
  "toupper",
  "trim",
  "length",
  "indexof",
  "concat",
  "substring",
  "replace",
  "year",
  "month",
  "day",
  "hour",
  "minute",
  "second",
  "now",
  "date",
  "round",
  "floor",
  "ceiling",
] as const;
export type FunctionName = (typeof functionNames)[number];

/** `a/b/c`, optionally ending in `/$count(…)` or a lambda `/any(x:…)`. */
export interface PathExpr {
  readonly kind: "path";
  readonly segments: readonly string[];
  readonly end?:
    | { readonly kind: "count"; readonly filter?: Expr }
    | {
        readonly kind: "lambda";
        readonly quantifier: "any" | "all";
        readonly variable: string;
        readonly body: Expr;
      };
}

export type Expr =
  | Literal
  | PathExpr
  | {
      readonly kind: "comparison";
      readonly op: ComparisonOperator;
      readonly left: Expr;
      readonly right: Expr;
    }
  | { readonly kind: "logical"; readonly op: "and" | "or"; readonly operands: readonly Expr[] }
  | {
      readonly kind: "arithmetic";
      readonly op: ArithmeticOperator;
      readonly left: Expr;
      readonly right: Expr;
    }
  | { readonly kind: "not"; readonly operand: Expr }
  | { readonly kind: "in"; readonly operand: Expr; readonly values: readonly Literal[] }
  | { readonly kind: "call"; readonly name: FunctionName; readonly args: readonly Expr[] };

export interface OrderItem {
  readonly path: PathExpr;
  readonly direction: "asc" | "desc";
}

export interface ExpandItem {
  readonly name: string;
  /** The key it is sent under, when not its name (a translated version's name). */
  readonly as?: string;
  /** `nav/$count`: a number in place of the array. */
  readonly count: boolean;
  readonly options: QueryOptions;
}

/**
 * A field or foreign key by name; or, from version translation, a field sent under another key,
 * possibly read through to-one navigations (v5's `device_type` is `is_of__device_type/slug`).
 */
export type SelectItem =
  | string
  | { readonly path: readonly string[]; readonly as: string }
  /** The same text in every row, under `as` (GraphQL's `__typename`). */
  | { readonly constant: string; readonly as: string }
  /** The row's weak ETag (./etag.ts), under `as` (OData v4's `@odata.etag`). */
  | { readonly etag: true; readonly as: string }
  /**
   * The row's id written between two texts, under `as`: OData v4's `@odata.id` (`device(5)`) and
   * an entity's navigation links (`device(5)/device_tag`).
   */
  | { readonly idBetween: readonly [before: string, after: string]; readonly as: string };

export interface QueryOptions {
  /** Undefined means every default field. */
  readonly select?: readonly SelectItem[];
  readonly expand?: readonly ExpandItem[];
  readonly filter?: Expr;
  readonly orderby?: readonly OrderItem[];
  readonly top?: number;
  readonly skip?: number;
  /** `$count=true`: the total number of matching rows alongside them. */
  readonly count?: boolean;
  /**
   * The order of each row's keys, for a surface that answers in an order of its own (GraphQL answers
   * in the order of the selection). Without it: the selected fields, then the expansions.
   */
  readonly keyOrder?: readonly string[];
  /** `$format`: `json`, with an optional `odata.metadata` level. */
  readonly format?: { readonly metadata?: string };
}

export type Key =
  | { readonly kind: "id"; readonly value: Literal }
  | { readonly kind: "fields"; readonly values: readonly (readonly [string, Literal])[] };

export interface ODataQuery {
  readonly resource: string;
  readonly key?: Key;
  /** `/resource/$count` */
  readonly count: boolean;
  readonly options: QueryOptions;
  /** The fields of a translated version that v6 has no column for, which the query names `@<name>`. */
  readonly versionFields?: VersionFields;
  /** How the statement answers when not as the JSON array of the rows (the default). */
  readonly answer?: ReadAnswer;
}

/**
 * `page`: at most `size` entities (OData v4's server-driven paging), read with a `$top` of one
 * more, and whether that one more exists (`more`).
 * `entity`: a read by key as its one entity, a JSON object (null when none), with the entity's ETag
 * beside it when the query reads one.
 * `byKeys`: JSON object members: for each of `names`, in order, the name and the entity whose
 * `field` has the value at the same place in `values` (null when none is read). For reads of
 * several keys put together: GraphQL's neighbouring root fields of one resource by one key field.
 * `at`: parts of the JSON array of the rows, each named by a path of member names and positions
 * (PostgreSQL's `#>`): for each of `values` its JSON text, for each of `types` its JSON type
 * (`object`, `array`, `null`…); either is null where the array has nothing at that path. For a
 * surface that answers with one part of a read: OData's resource paths.
 */
export type ReadAnswer =
  | { readonly kind: "page"; readonly size: number }
  | { readonly kind: "entity" }
  | { readonly kind: "at"; readonly values: readonly JsonPath[]; readonly types: readonly JsonPath[] }
  | {
      readonly kind: "byKeys";
      readonly field: string;
      readonly names: readonly string[];
      readonly values: readonly (string | number)[];
    };

/** Member names and array positions (as text) from the top of a JSON value down. */
export type JsonPath = readonly string[];

/**
 * A field a newer version reads and v6 computes from its own fields. The translator names it
 * `@<name>` in the v6 query (no client name starts with `@`) and declares it here; the planner
 * resolves it like a field of the model. Paths are v6 names, from the resource that has the field.
 */
export type VersionField =
  /**
   * A link: the first of the to-one paths whose value is not null (v7's device target release: the
   * device's pin, else its fleet's). With a `target` it expands and navigates like a foreign key;
   * without one it is only read as `{"__id": N}` (v7's `actor`, whose resource v6 does not serve).
   */
  | {
      readonly kind: "link";
      readonly firstOf: readonly (readonly string[])[];
      readonly target?: string;
    }
  /** A text field whose values are named otherwise: the v6 value → this version's. */
  | {
      readonly kind: "values";
      readonly path: readonly string[];
      readonly values: Readonly<Record<string, string>>;
    }
  /**
   * A field v6 keeps hidden, read as it is: a column only this version serves (v7's
   * `changed_api_heartbeat_state_on__date`), or a computed field of this version's own rule (v7's
   * overall_status).
   */
  | { readonly kind: "hidden"; readonly field: string };

/** v6 resource → `@name` → its definition. */
export type VersionFields = ReadonlyMap<string, ReadonlyMap<string, VersionField>>;

/**
 * A foreign key given by another unique field of the row it points to (an older version's
 * `device_type: "<slug>"`); the write core resolves it to the id inside its transaction.
 */
export class LinkReference {
  constructor(
    /** The v6 resource it points to, and the unique field that names the row. */
    readonly resource: string,
    readonly field: string,
    readonly value: unknown,
    /** The name the caller wrote, for error messages. */
    readonly writtenAs: string,
  ) {}
}

/** `expr` with each path replaced by what `path` makes of it; every other node is rebuilt around them. */
export function mapPaths(expr: Expr, path: (path: PathExpr) => Expr): Expr {
  const map = (node: Expr): Expr => {
    switch (node.kind) {
      case "path":
        return path(node);
      case "comparison":
      case "arithmetic":
        return { ...node, left: map(node.left), right: map(node.right) };
      case "logical":
        return { ...node, operands: node.operands.map(map) };
      case "not":
      case "in":
        return { ...node, operand: map(node.operand) };
      case "call":
        return { ...node, args: node.args.map(map) };
      default:
        return node;
    }
  };
  return map(expr);
}

/** `id in (…)`: the rows of these ids (a batch of lookups, a snapshot after a write). */
export function idIn(ids: readonly number[]): Expr {
  return {
    kind: "in",
    operand: { kind: "path", segments: ["id"] },
    values: ids.map((id) => ({ kind: "number", value: id })),
  };
}
