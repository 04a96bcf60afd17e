export type ScalarType = "Integer" | "Text" | "Boolean" | "DateTime" | "JSON";

export interface Field {
  readonly name: string;
  readonly type: ScalarType;
  readonly nullable: boolean;
  /** The column has a default, which PUT restores when a field is left out. */
  readonly hasDefault: boolean;
  /** The column's default when it is a constant (`false`, `"unknown"`), for `$metadata`'s DefaultValue. */
  readonly defaultValue?: string | number | boolean;
  /**
   * For a foreign key: the table it points to; read as `{"__id": N}` unless expanded. It can be
   * expanded (a navigation of the same name exists) unless the table is internal (`actor`).
   */
  readonly link?: string;
  /** Derived on read (its SQL lives in the compiler), never stored. */
  readonly computed: boolean;
  /** Computed fields appear only when named in `$select`. */
  readonly selectedByDefault: boolean;
  /**
   * Read only on the rows the caller owns (`Permissions.ownRows`); null on the other rows they may
   * read (annotations.ts `ownerOnlyFields`).
   */
  readonly ownerOnly?: boolean;
}

export interface Navigation {
  readonly name: string;
  /** Resource name of the other side. */
  readonly target: string;
  readonly cardinality: "one" | "many";
  /** Column on this resource's table that the join uses. */
  readonly localColumn: string;
  /** Column on the target's table that it must equal. */
  readonly remoteColumn: string;
  /**
   * A many-to-many navigation through a link table: a target row is linked when a row of `through`
   * has `through.localColumn` equal to this row's `localColumn` and `through.remoteColumn` equal to
   * the target's `remoteColumn`. Its rows are read with the link table's permission predicate too.
   */
  readonly through?: LinkTable;
}

export interface LinkTable {
  /** Resource name of the link table. */
  readonly resource: string;
  readonly localColumn: string;
  readonly remoteColumn: string;
}

export interface Resource {
  readonly name: string;
  readonly table: string;
  readonly fields: ReadonlyMap<string, Field>;
  /** Columns no API reads (secrets, hashes); the server writes them, and a caller only those `writability` lists. */
  readonly hiddenFields: ReadonlyMap<string, Field>;
  readonly navigations: ReadonlyMap<string, Navigation>;
  /** Field sets that identify one row: `id` first, then every unique key (for `device(uuid='…')`). */
  readonly keys: readonly (readonly string[])[];
  /** What callers may write; the server owns everything else. */
  readonly writability: {
    readonly create: readonly string[];
    readonly update: readonly string[];
    readonly required: readonly string[];
    readonly deletable: boolean;
  };
}

export interface Model {
  readonly resources: ReadonlyMap<string, Resource>;
}
