import type { PrismaClient } from "../generated/prisma/client.ts";

/** One SQL statement with its parameters bound separately: no value ever reaches the text. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

export interface Executor {
  query<Row = Record<string, unknown>>(statement: Statement): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations, seeds). */
  script(sql: string): Promise<void>;
}

/** A connection pool's state, for /metrics. */
export interface PoolStats {
  /** The most connections the pool opens (DATABASE_POOL_SIZE). */
  readonly max: number;
  /** Connections open now, busy or idle. */
  readonly total: number;
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
}

export interface Database extends Executor {
  readonly kind: "postgres" | "embedded";
  /** The typed client for writes, on the same connections as `query`. */
  readonly prisma: PrismaClient;
  /** Runs `work` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** PostgreSQL's pool; the embedded database has none (one connection, inside the process). */
  poolStats?(): PoolStats;
}
