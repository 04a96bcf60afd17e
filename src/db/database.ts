import type { PrismaClient } from "../generated/prisma/client.ts";
import type { ConnectionBudget } from "./connection-budget.ts";
import type { EmbeddedConnection } from "./embedded-thread.ts";

/** One SQL statement with its parameters bound separately: no value ever reaches the text. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
  /**
   * How PostgreSQL keeps it (with DATABASE_PREPARED_STATEMENTS): left out, a prepared statement
   * named after its text; a name, prepared under that name (a long text is not hashed on every
   * run); `false`, sent unnamed and planned for this run only, so a one-off statement does not
   * stay on the connection (core/combined-reads.ts).
   */
  readonly prepare?: string | false;
  /**
   * A read of the planner (core/read.ts): it writes nothing, so a read request may have a replica
   * run it (./replicas.ts). Left out, the statement runs on the primary.
   */
  readonly readOnly?: boolean;
}

/** Statements sent, by the database that ran them (/metrics' `fleetgate_db_statements_total`). */
export interface StatementCounts {
  readonly primary: number;
  readonly replica: number;
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
  /** The typed client for writes, on the same connections as `query`, made on first use. */
  readonly prisma: PrismaClient;
  /**
   * The embedded database: lets the typed client go until it is used again. It holds about 80 MiB
   * of the server's memory, which a server that used it once (the demo seed, run inside it) need
   * not keep. (On PostgreSQL the seed is a process of its own.)
   */
  releasePrisma?(): Promise<void>;
  /** Runs `work` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * NOTIFY on `channel`, delivered to `onPayload` over a connection of its own (src/events' bus);
   * resolves to the function that stops. `onMissed` is called when listening resumes after its
   * connection was lost: what was NOTIFYed meanwhile is lost. `onLost` is called whenever it does not
   * listen: at once when listening could not start, and each time its connection is lost. Absent on
   * a database that cannot listen.
   */
  listen?(
    channel: string,
    onPayload: (payload: string) => void,
    onMissed?: () => void,
    onLost?: () => void,
  ): Promise<() => Promise<void>>;
  /**
   * This instance committed a change that may narrow what a caller may read (a key, a user, a
   * membership): with replicas, reads wait until they have replayed it (./replicas.ts).
   */
  rightsChanged?(): void;
  /** Statements sent so far, by the database that ran them. */
  statementsByTarget?(): StatementCounts;
  /**
   * PostgreSQL's URL for connections that are sessions (DATABASE_DIRECT_URL, else DATABASE_URL):
   * the job queue's own small pool (src/proxy/jobs/), which LISTENs.
   */
  readonly directUrl?: string;
  /** The embedded database's one connection, for the job queue's own adapter (src/proxy/jobs/). */
  readonly embedded?: EmbeddedConnection;
  /**
   * The connections subscriptions' reads share (DATABASE_STREAM_CONNECTIONS): however many streams
   * and changes there are, they hold no more of the pool than this, and requests keep the rest.
   */
  readonly streams: ConnectionBudget;
  /** PostgreSQL's pool; the embedded database has none (one connection, inside the process). */
  poolStats?(): PoolStats;
}
