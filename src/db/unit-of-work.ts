import { AsyncLocalStorage } from "node:async_hooks";
import { ConnectionBudget } from "./connection-budget.ts";

// What the database layer knows of the unit of work a statement runs for (an HTTP request's
// handler), carried in the async context so every surface (OData, GraphQL, the proxy's target lookup)
// gets it without passing it down by hand: how many statements it ran (the one-statement-per-read
// rule, shown in x-sql-statements), whether its client went away (then the statement running is
// cancelled and the ones not yet sent are not sent), and the one connection its statements take in
// turn (DESIGN.md, "Bounded work": a request holds at most one, however many root fields it has).
// One context and plain fields, not an AbortController per request: this runs on every request,
// and the hot path shows it.
export interface UnitOfWork {
  /** The request's id (`x-request-id`), for the records a unit writes about itself (proxy audit rows). */
  readonly id?: string;
  count: number;
  abandoned: boolean;
  /** Cancels the statements running now. */
  readonly running: Set<() => void>;
  /**
   * A budget of one connection: the unit's statements run one after another, never side by side.
   * So inside `Database.transaction`, every statement goes through its executor: one on the
   * database itself would wait for the transaction's connection, which waits for it.
   */
  readonly connection: ConnectionBudget;
  /**
   * Whether its planner reads may run on a replica (db/replicas.ts): a read request's (HTTP's safe
   * methods, a GraphQL query), until it begins a transaction. Nothing else does.
   */
  replicaReads: boolean;
  /** The actor whose credential the request carried: whose writes it makes, whose reads must see them. */
  actor: number | undefined;
}

const scope = new AsyncLocalStorage<UnitOfWork>();

export function newUnitOfWork(id?: string, actor?: number): UnitOfWork {
  return {
    id,
    count: 0,
    abandoned: false,
    running: new Set(),
    connection: new ConnectionBudget(1),
    replicaReads: false,
    actor,
  };
}

/** The current unit of work only reads: its planner reads may run on a replica (db/replicas.ts). */
export function readsOnReplicas(): void {
  const unit = scope.getStore();
  if (unit) unit.replicaReads = true;
}

export function withUnitOfWork<T>(unit: UnitOfWork, work: () => T): T {
  return scope.run(unit, work);
}

export function currentUnit(): UnitOfWork | undefined {
  return scope.getStore();
}

// The unit whose one connection the current async context holds: a transaction's work. A statement
// such work sends on the database itself (not on the transaction) cannot wait for that connection,
// which is only freed when the work ends: it takes a connection of its own instead of hanging.
const holder = new AsyncLocalStorage<UnitOfWork>();

/** Runs `work` (a transaction's) as holding `unit`'s connection. */
export function holdingConnection<T>(unit: UnitOfWork | undefined, work: () => T): T {
  return unit ? holder.run(unit, work) : work();
}

/** Whether the current async context runs inside work that holds `unit`'s connection. */
export function holdsConnection(unit: UnitOfWork): boolean {
  return holder.getStore() === unit;
}

export function countStatement(): void {
  const unit = scope.getStore();
  if (unit) unit.count++;
}

/** The client went away: cancel what runs, send nothing more. */
export function abandon(unit: UnitOfWork): void {
  if (unit.abandoned) return;
  unit.abandoned = true;
  for (const cancel of unit.running) cancel();
}

/** Runs `work` as a unit of work that is abandoned when `signal` aborts (for callers that hold a signal). */
export function withCancellation<T>(signal: AbortSignal, work: () => T): T {
  const unit = newUnitOfWork();
  if (signal.aborted) unit.abandoned = true;
  else signal.addEventListener("abort", () => abandon(unit), { once: true });
  return withUnitOfWork(unit, work);
}

/**
 * Runs `work` outside the current unit of work, with everything it starts (timers, loops): the
 * server's own background work, such as the job queue a request happened to start first.
 */
export function outsideUnitOfWork<T>(work: () => T): T {
  return scope.exit(work);
}
