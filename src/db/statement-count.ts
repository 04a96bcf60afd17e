import { AsyncLocalStorage } from "node:async_hooks";

// Counts SQL statements per unit of work (an HTTP request, a test step), so the request
// log and any test can check the one-statement-per-read rule.
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

export async function countStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const counter = { count: 0 };
  const result = await withStatementCounter(counter, work);
  return { result, statements: counter.count };
}
