import type { Database, Executor, Statement } from "./database.ts";

/**
 * `db` as seen from inside the transaction `tx`: every statement runs in `tx`, and a transaction
 * begun on it (the write core begins its own) joins `tx` instead, so it commits or rolls back with
 * the caller's work and sees the locks the caller holds. Anything else is `db`'s own.
 */
export function withinTransaction(db: Database, tx: Executor): Database {
  return Object.create(db, {
    query: { value: <Row>(statement: Statement) => tx.query<Row>(statement) },
    script: { value: (sql: string) => tx.script(sql) },
    transaction: { value: <T>(work: (tx: Executor) => Promise<T>) => work(tx) },
    // Prisma runs on connections of its own, outside `tx`: refused rather than silently escaping it.
    prisma: {
      get() {
        throw new Error("Prisma cannot run inside another transaction");
      },
    },
  });
}
