import { AsyncLocalStorage } from "node:async_hooks";

// Counts SQL statements per unit of work (an HTTP request, a test step), so the request log and
// any test can check the one-statement-per-read rule. Scopes nest: a statement counts in every
// enclosing scope, so a test around a request sees what the request's own counter saw.
export interface StatementCounter {
  count: number;
  parent?: StatementCounter | undefined;
}

const scope = new AsyncLocalStorage<StatementCounter>();

export function countStatement(): void {
  for (let counter = scope.getStore(); counter; counter = counter.parent) counter.count++;
}

export function withStatementCounter<T>(counter: StatementCounter, work: () => T): T {
  counter.parent = scope.getStore();
  return scope.run(counter, work);
}

export async function countStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const counter: StatementCounter = { count: 0 };
  const result = await withStatementCounter(counter, work);
  return { result, statements: counter.count };
}
