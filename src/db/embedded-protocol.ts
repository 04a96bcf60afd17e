// The messages between the server's thread and the embedded database's own (./embedded-thread.ts and
// ./embedded-worker.ts). Only what the structured clone carries crosses: rows, fields and errors as
// plain data; a parser function stays on the server's side, which names the types it wants raw.

/** What the worker is asked: each request has an id its answer carries back. */
export type EmbeddedRequest =
  | {
      readonly op: "query";
      readonly id: number;
      /** The transaction it runs in, or none: then in turn with every other statement. */
      readonly transaction?: number;
      readonly text: string;
      readonly values: readonly unknown[];
      readonly rowMode?: "array" | "object";
      readonly paramTypes?: readonly number[];
      /** Type OIDs whose values come back as PostgreSQL's text, for the server's own parsers. */
      readonly rawTypes?: readonly number[];
    }
  | { readonly op: "exec"; readonly id: number; readonly transaction?: number; readonly text: string }
  | { readonly op: "begin"; readonly id: number }
  | { readonly op: "rollback"; readonly id: number; readonly transaction: number }
  | {
      readonly op: "end";
      readonly id: number;
      readonly transaction: number;
      readonly outcome: "commit" | "rollback";
    }
  | { readonly op: "listen"; readonly id: number; readonly channel: string }
  | { readonly op: "unlisten"; readonly id: number; readonly listener: number }
  | { readonly op: "close"; readonly id: number };

/** An error as data: PostgreSQL's fields when the database raised it. */
export interface EmbeddedFailure {
  readonly message: string;
  readonly name: string;
  /** Raised by PostgreSQL (PGlite's DatabaseError), with its fields (code, detail, constraint, …). */
  readonly database?: Readonly<Record<string, string | number | undefined>>;
}

/** What the worker sends back. */
export type EmbeddedReply =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly error: EmbeddedFailure }
  | { readonly kind: "answer"; readonly id: number; readonly value: unknown }
  | { readonly kind: "error"; readonly id: number; readonly error: EmbeddedFailure }
  | { readonly kind: "notification"; readonly listener: number; readonly payload: string };

/** What the worker is started with. */
export interface EmbeddedStart {
  readonly dataDir: string | undefined;
  readonly startParams: readonly string[];
  /** PGlite's WebAssembly, compiled once a process and shared by its threads (./embedded-thread.ts). */
  readonly modules: { readonly pglite: WebAssembly.Module; readonly initdb: WebAssembly.Module };
}

// PostgreSQL's error fields as PGlite's DatabaseError carries them (pg-protocol's names).
export const databaseErrorFields = [
  "length",
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;
