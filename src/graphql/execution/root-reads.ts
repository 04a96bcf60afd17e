import DataLoader from "dataloader";
import { type CombinedStatements, runReads } from "../../core/combined-reads.ts";
import { type CompiledRead, type ReadResult, runRead } from "../../core/read.ts";
import type { Executor } from "../../db/database.ts";

/**
 * The reads of one request's root query fields. graphql-js and graphql-jit call the resolvers of a
 * query's root fields one after another, synchronously, so the reads they ask for in that turn are
 * run together, by DataLoader's scheduling, as one statement (core/combined-reads.ts): a query with
 * 300 aliases is one round trip. Each field still plans and compiles its own read, so a field's
 * mistake stays its own error; a statement that fails as a whole (time-out, database away) fails
 * every field it held. Without `combined` (GRAPHQL_ONE_STATEMENT=false), each read is its own statement.
 */
export class RootReads {
  private readonly loader: DataLoader<CompiledRead, ReadResult> | undefined;

  constructor(
    private readonly db: Executor,
    combined: CombinedStatements | undefined,
  ) {
    this.loader = combined
      ? new DataLoader(
          async (reads) =>
            (await runReads(db, reads, combined)).map((settled) =>
              settled.status === "fulfilled" ? settled.value : asError(settled.reason),
            ),
          { cache: false },
        )
      : undefined;
  }

  read(read: CompiledRead): Promise<ReadResult> {
    return this.loader ? this.loader.load(read) : runRead(this.db, read);
  }
}

// DataLoader rejects a key whose answer is an Error; anything else thrown is wrapped so it is one.
function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason), { cause: reason });
}
