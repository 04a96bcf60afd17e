import type { Fragment } from "../db/sql.ts";
import type { Field, Navigation, Resource } from "../model/types.ts";
import type { ArithmeticOperator, ComparisonOperator, FunctionName, Literal, ReadAnswer } from "./query.ts";

// The read plan: every name resolved against the model, every table aliased and carrying the
// caller's permission predicate. The compiler's only input.

export type ExprType = "Integer" | "Real" | "Text" | "Boolean" | "DateTime" | "Date" | "JSON" | "Null";

export interface TableRef {
  readonly resource: Resource;
  readonly alias: string;
  /** The caller's row predicate for this table, ANDed in wherever the table is read. */
  readonly permission: Fragment;
  /** The rows whose owner-only fields the caller reads (`Permissions.ownRows`); undefined: all. */
  readonly ownRows?: Fragment;
}

/** child rows are those whose `navigation.remoteColumn` equals the parent's `navigation.localColumn`. */
export interface Join {
  readonly parent: TableRef;
  readonly navigation: Navigation;
  readonly child: TableRef;
  /** The parent's side when it is computed rather than a column: a version field's link. */
  readonly local?: Planned;
  /** The link table of a navigation `through` one (its rows link parent and child), with its predicate. */
  readonly through?: TableRef;
}

export type Planned = { readonly type: ExprType } & (
  | { readonly kind: "literal"; readonly literal: Literal }
  | { readonly kind: "column"; readonly table: TableRef; readonly field: Field }
  | {
      readonly kind: "comparison";
      readonly op: ComparisonOperator;
      readonly left: Planned;
      readonly right: Planned;
    }
  | { readonly kind: "logical"; readonly op: "and" | "or"; readonly operands: readonly Planned[] }
  | {
      readonly kind: "arithmetic";
      readonly op: ArithmeticOperator;
      readonly left: Planned;
      readonly right: Planned;
    }
  | { readonly kind: "not"; readonly operand: Planned }
  | { readonly kind: "in"; readonly operand: Planned; readonly values: readonly Literal[] }
  | { readonly kind: "call"; readonly name: FunctionName; readonly args: readonly Planned[] }
  /** A value read through a to-one navigation. */
  | { readonly kind: "toOne"; readonly join: Join; readonly value: Planned }
  | {
      readonly kind: "lambda";
      readonly quantifier: "any" | "all";
      readonly join: Join;
      readonly body: Planned;
    }
  | { readonly kind: "count"; readonly join: Join; readonly filter: Planned | undefined }
  /** The first operand that is not null. */
  | { readonly kind: "coalesce"; readonly operands: readonly Planned[] }
  /** A text value with some values named otherwise (a version field's `values`). */
  | { readonly kind: "renamed"; readonly value: Planned; readonly values: Readonly<Record<string, string>> }
);

export type Format = "pinejs" | "v4";

export type OutputItem =
  | { readonly kind: "value"; readonly key: string; readonly value: Planned }
  /** An unexpanded foreign key: `{"__id": N}` (pinejs) or the bare id (v4). */
  | { readonly kind: "link"; readonly key: string; readonly id: Planned }
  | { readonly kind: "expand"; readonly key: string; readonly join: Join; readonly select: SelectPlan }
  /** The row's weak ETag (etag.ts). */
  | { readonly kind: "etag"; readonly key: string; readonly table: TableRef }
  /** Whether the caller may also change the row: their write predicate (system reads only). */
  | { readonly kind: "writable"; readonly key: string; readonly predicate: Fragment }
  | {
      readonly kind: "expandCount";
      readonly key: string;
      readonly join: Join;
      readonly filter: Planned | undefined;
    };

export interface OrderTerm {
  readonly value: Planned;
  readonly direction: "asc" | "desc";
}

export interface SelectPlan {
  readonly table: TableRef;
  /** Conjuncts besides the permission predicate (key, $filter, the join to a parent). */
  readonly where: readonly Planned[];
  readonly output: readonly OutputItem[];
  readonly orderBy: readonly OrderTerm[];
  readonly top: number | undefined;
  readonly skip: number | undefined;
  /** `$count=true`: also count every matching row (ignoring $top and $skip). */
  readonly inlineCount: boolean;
}

export interface PlannedByKeys {
  readonly kind: "byKeys";
  readonly key: Planned;
  readonly names: readonly string[];
  readonly values: readonly (string | number)[];
}

export type ReadPlan =
  | {
      readonly kind: "collection";
      readonly format: Format;
      readonly select: SelectPlan;
      /** ODataQuery's `answer`; a `byKeys` answer's field planned as `key`. */
      readonly answer?: Exclude<ReadAnswer, { kind: "byKeys" }> | PlannedByKeys;
    }
  | { readonly kind: "count"; readonly table: TableRef; readonly where: readonly Planned[] };
