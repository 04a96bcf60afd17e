import { createHash } from "node:crypto";
import type { Executor, Statement } from "../db/database.ts";
import { ConnectionsBusy, isConnectionFailure, QueryCancelled, StatementTimeout } from "../db/failures.ts";
import { asRead, type CompiledRead, type ReadResult, runRead } from "./read.ts";

// Several compiled reads as one statement: each read, unchanged but for its parameter numbers, is
// a scalar subquery of one SELECT, so a GraphQL operation with 300 root fields is one round trip
// and one statement, as one field is. Every read returns exactly one row (core/sql/compile.ts),
// and a subquery that returned none would be null, read as `runRead` reads a missing row.

/** PostgreSQL's select list holds at most 1664 columns: one statement combines at most this many reads. */
const MAX_READS = 1_000;
/** The protocol counts a statement's bound values in 16 bits. */
const MAX_VALUES = 32_767;

// A placeholder, or a quoted name or text that may hold a `$` (a JSON path, a pattern) left as it is.
const PLACEHOLDER = /'[^']*'|"[^"]*"|\$(\d+)/g;

/** `text` with its placeholders `$1…$n` moved up by `offset`; `n` must be the read's own count of values. */
function renumbered(text: string, offset: number, count: number): string {
  let highest = 0;
  const moved = text.replace(PLACEHOLDER, (match, n: string | undefined) => {
    if (n === undefined) return match;
    highest = Math.max(highest, Number(n));
    return `$${Number(n) + offset}`;
  });
  if (highest !== count) throw new Error(`a read's statement binds ${count} values but names $${highest}`);
  return moved;
}

/** The column of one read: its body, its count, or (with an inline count) `<count> <body>`. */
function column(read: CompiledRead, index: number, offset: number): string {
  const from = `FROM (${renumbered(read.statement.text, offset, read.statement.values.length)}) AS r`;
  const value =
    read.kind === "count"
      ? `r."count"`
      : read.inlineCount
        ? `r."count"::text || ' ' || coalesce(r."body", '[]')`
        : `r."body"`;
  return `(SELECT ${value} ${from}) AS "r${index}"`;
}

function combinedText(reads: readonly CompiledRead[]): string {
  let offset = 0;
  const columns = reads.map((read, index) => {
    const text = column(read, index, offset);
    offset += read.statement.values.length;
    return text;
  });
  return `SELECT ${columns.join(", ")}`;
}

/** One read's answer from its column, as `runRead` gives it. */
function resultOf(read: CompiledRead, value: unknown): ReadResult {
  if (read.kind === "count") return { kind: read.kind, json: "[]", count: (value as number | null) ?? 0 };
  if (!read.inlineCount) return { kind: read.kind, json: (value as string | null) ?? "[]", count: undefined };
  if (value === null || value === undefined) return { kind: read.kind, json: "[]", count: undefined };
  const text = value as string;
  const space = text.indexOf(" ");
  return { kind: read.kind, json: text.slice(space + 1), count: Number(text.slice(0, space)) };
}

interface Combination {
  readonly text: string;
  /** Its prepared statement's name, once the same combination came again. */
  name?: string;
}

/**
 * The combined statements of the combinations of read statements seen lately, least recently used
 * out first, bounded in entries and in characters (300 reads make a text of some 100 KB). A
 * combination runs unnamed the first time and as a named prepared statement from its second time
 * on, so one-off combinations leave nothing on the connections; the ones that come back are what
 * the pool's connections keep, like the statements of single reads (a connection is recycled
 * after 20,000 uses, src/db/postgres.ts).
 */
export class CombinedStatements {
  private readonly entries = new Map<string, Combination>();
  private chars = 0;
  // Each read text seen lately, as a number: a combination's key is its reads' numbers.
  private readonly numbers = new Map<string, number>();
  private nextNumber = 0;

  constructor(
    private readonly capacity = 200,
    private readonly maxChars = 16_000_000,
  ) {}

  /** The one statement that answers every read in `reads`, each as column `r<i>`. */
  statementOf(reads: readonly CompiledRead[]): Statement {
    const values = reads.flatMap((read) => read.statement.values);
    const key = reads.map((read) => this.numberOf(read.statement.text)).join(",");
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      entry.name ??= `fgc_${createHash("sha1").update(entry.text).digest("base64url")}`;
      return { text: entry.text, values, prepare: entry.name };
    }
    const text = combinedText(reads);
    this.remember(key, text);
    return { text, values, prepare: false };
  }

  private numberOf(text: string): number {
    let number = this.numbers.get(text);
    if (number === undefined) {
      // Numbers are never reused, so a combination keyed before a clear cannot be mistaken for another.
      if (this.numbers.size >= this.capacity * 50) this.numbers.clear();
      number = this.nextNumber++;
      this.numbers.set(text, number);
    }
    return number;
  }

  private remember(key: string, text: string): void {
    if (this.capacity <= 0 || text.length > this.maxChars / 4) return;
    this.entries.set(key, { text });
    this.chars += text.length;
    while (this.entries.size > this.capacity || this.chars > this.maxChars) {
      const [oldest, evicted] = this.entries.entries().next().value as [string, Combination];
      this.entries.delete(oldest);
      this.chars -= evicted.text.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Whether a statement's failure is the statement's as a whole (the connection, the time-out, the
 * client gone, no connection free), not one read's own (a value out of range in its filter).
 */
function failsEveryRead(error: unknown): boolean {
  return (
    error instanceof StatementTimeout ||
    error instanceof QueryCancelled ||
    error instanceof ConnectionsBusy ||
    isConnectionFailure(error)
  );
}

/** Groups of reads, in order, that one statement each can hold. */
function groupsOf(reads: readonly CompiledRead[]): CompiledRead[][] {
  const groups: CompiledRead[][] = [];
  let group: CompiledRead[] = [];
  let values = 0;
  for (const read of reads) {
    const count = read.statement.values.length;
    if (group.length > 0 && (group.length >= MAX_READS || values + count > MAX_VALUES)) {
      groups.push(group);
      group = [];
      values = 0;
    }
    group.push(read);
    values += count;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

async function runGroup(
  db: Executor,
  reads: readonly CompiledRead[],
  combined: CombinedStatements,
): Promise<PromiseSettledResult<ReadResult>[]> {
  if (reads.length === 1) return Promise.allSettled([runRead(db, reads[0] as CompiledRead)]);
  let row: Record<string, unknown> | undefined;
  try {
    [row] = await db.query<Record<string, unknown>>(asRead(combined.statementOf(reads)));
  } catch (error) {
    if (failsEveryRead(error)) return reads.map(() => ({ status: "rejected", reason: error }));
    // One read's own error (its filter's value out of range): each read runs alone, so it is the
    // error of that read only, and the others answer as they would have. (So does a read whose text
    // could not be combined: `renumbered` refuses it.)
    return Promise.allSettled(reads.map((read) => runRead(db, read)));
  }
  return reads.map((read, index) => ({ status: "fulfilled", value: resultOf(read, row?.[`r${index}`]) }));
}

/** Reads with the same key answer the same in one statement: the same text, the same values. */
function sameReadKey(read: CompiledRead): string | undefined {
  try {
    return `${read.statement.text}\u0000${JSON.stringify(read.statement.values)}`;
  } catch {
    return undefined;
  }
}

/**
 * The answers of several reads, in their order, from one statement (or one per MAX_READS reads):
 * each the answer `runRead` gives it alone. The same statement with the same values is read once.
 * A failure of the statement as a whole is every read's.
 */
export async function runReads(
  db: Executor,
  reads: readonly CompiledRead[],
  combined: CombinedStatements,
): Promise<PromiseSettledResult<ReadResult>[]> {
  const distinct: CompiledRead[] = [];
  const byKey = new Map<string, number>();
  const slots = reads.map((read, index) => {
    const key = sameReadKey(read) ?? `unique ${index}`;
    let slot = byKey.get(key);
    if (slot === undefined) {
      slot = distinct.push(read) - 1;
      byKey.set(key, slot);
    }
    return slot;
  });
  const settled: PromiseSettledResult<ReadResult>[] = [];
  for (const group of groupsOf(distinct)) settled.push(...(await runGroup(db, group, combined)));
  return slots.map((slot) => settled[slot] as PromiseSettledResult<ReadResult>);
}
