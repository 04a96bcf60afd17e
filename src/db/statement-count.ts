import { AsyncLocalStorage } from "node:async_hooks";

// Counts the SQL statements of a unit of work (an HTTP request's handler), so the request log and
// the x-sql-statements header can show the one-statement-per-read rule holding.
export interface StatementCounter {
  count: number;
}

const scope = new AsyncLocalStorage<StatementCounter>();

export function countStatement(): void {
  const counter = scope.getStore();
  if (counter) counter.count++;
}

export function withStatementCounter<T>(counter: StatementCounter, work: () => T): T {
  return scope.run(counter, work);
}
