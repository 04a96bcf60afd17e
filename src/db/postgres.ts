import "./pg-navigator.ts";
import pg from "pg";
import "./pg-navigator-end.ts";
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import { ConnectionBudget } from "./connection-budget.ts";
import type { Database, Executor, Statement } from "./database.ts";
import {
  ConnectionFailed,
  ConnectionsBusy,
  isConnectionFailure,
  isQueryCanceled,
  QueryCancelled,
  StatementTimeout,
} from "./failures.ts";
import { cancelBackend } from "./pg-cancel.ts";
import { PgListener } from "./pg-listener.ts";
import { countStatement, currentUnit, holdingConnection, holdsConnection } from "./unit-of-work.ts";

// Named prepared statements: PostgreSQL plans each distinct text once per connection.
// The name is derived from the text, so the same text always reuses its plan.
// The names of the texts seen lately, so a busy text is not hashed on every request.
const names = new Map<string, string>();
const remembered = 1_000;

function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `fg_${createHash("sha1").update(text).digest("base64url")}`;
    if (names.size >= remembered) names.clear();
    names.set(text, name);
  }
  return name;
}

export interface PostgresOptions {
  readonly url: string;
  readonly poolSize: number;
  /** `statement_timeout` of a statement of its own (every read); 0: none. */
  readonly statementTimeoutMs?: number;
  /** `statement_timeout` of each statement inside a write transaction; 0: none. */
  readonly writeTimeoutMs?: number;
  /** How long a caller waits for a connection (a free one from the pool, or a new one). */
  readonly connectTimeoutMs?: number;
  /** The most connections subscriptions' reads hold at once; default a quarter of the pool, at least 1. */
  readonly streamConnections?: number;
  /** A direct connection for what needs a session: the change bus's LISTEN, the job queue; default `url`. */
  readonly directUrl?: string | undefined;
  /**
   * Named prepared statements and session settings on `url`'s connections (default true). False
   * when `url` is a transaction pooler (PgBouncer), where consecutive statements of one connection
   * may run on different server sessions: statements go unnamed and nothing is left in a session.
   */
  readonly preparedStatements?: boolean | undefined;
  /** Told when an idle connection of the pool is lost (the server stopped or restarted). */
  readonly onConnectionLost?: () => void;
}

export const postgresDefaults = {
  statementTimeoutMs: 5_000,
  writeTimeoutMs: 30_000,
  connectTimeoutMs: 5_000,
} as const;

// pg-pool's words when a caller's wait for a pooled connection ran out. A new connection that does
// not open in time says "Connection terminated due to connection timeout" instead.
const WAIT_TIMED_OUT = "timeout exceeded when trying to connect";

/** A connection from the pool for one caller, or why there is none: how every statement gets one. */
interface Connections {
  connect(): Promise<pg.PoolClient>;
}

function connections(pool: pg.Pool, max: number, waitMs: number): Connections {
  // Connections handed to callers now. The pool's own counts cannot tell these from connections
  // still being opened, which a wait also waits for when the database does not answer.
  let busy = 0;
  pool.on("acquire", () => busy++);
  pool.on("release", () => busy--);
  return {
    connect: () =>
      pool.connect().catch((error: unknown) => {
        // The wait ran out while every connection was serving someone: the server is busy, not the
        // database away, and the client is told so (src/core/client-errors.ts).
        if (error instanceof Error && error.message === WAIT_TIMED_OUT && busy >= max)
          throw new ConnectionsBusy(waitMs, { cause: error });
        throw new ConnectionFailed({ cause: error });
      }),
  };
}

/**
 * Checks a connection out for one caller and gives it back, whatever happened: an 'error' listener
 * while it is out (a backend terminated between two statements emits one, and an 'error' event
 * without a listener ends the process), and a connection that failed, or is still inside a
 * transaction (its ROLLBACK failed), is discarded, not reused. Inside a unit of work, one statement
 * (or transaction) at a time: a request holds at most one connection.
 */
function withClient<T>(connections: Connections, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const unit = currentUnit();
  if (!unit || holdsConnection(unit)) return checkedOut(connections, work);
  return unit.connection.use(async () => {
    // Its client went away while the statement waited its turn: no connection is taken for it.
    if (unit.abandoned) throw new QueryCancelled();
    return checkedOut(connections, work);
  });
}

async function checkedOut<T>(
  connections: Connections,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await connections.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  try {
    return await work(client);
  } catch (error) {
    if (isConnectionFailure(error)) broken ??= error as Error;
    throw error;
  } finally {
    const idle = client.getTransactionStatus() === "I";
    client.release(broken ?? !idle);
    client.off("error", onError);
  }
}

type Scope = "statement" | "write";

// What pg's Query reads of a config, set after it is made from the text alone (the types do not
// show them).
interface QueryFields {
  name?: string | undefined;
  values?: unknown[] | undefined;
  callback?: (error: Error | null, result: pg.QueryResult) => void;
}

/**
 * `client.query(config)`, less what pg does on every call that a statement of ours does not need:
 * pg copies a config object through its property descriptors (`normalizeQueryConfig`) and chains a
 * second promise to rewrite the stack of an error. pg's own Query, made from the text (a string is
 * not copied) with the name and values set on it, runs the same protocol.
 */
function submit(client: pg.PoolClient, config: string | pg.QueryConfig): Promise<pg.QueryResult> {
  // Row modes and type parsers are read when a Query is made: such a config goes the usual way.
  if (typeof config !== "string" && ("rowMode" in config || config.types !== undefined))
    return client.query(config);
  return new Promise((resolve, reject) => {
    const query = new pg.Query(typeof config === "string" ? config : config.text) as pg.Query & QueryFields;
    if (typeof config !== "string") {
      query.name = config.name;
      query.values = config.values;
    }
    query.callback = (error, result) => {
      if (!error) return resolve(result);
      // As pg does: the stack leads back to the statement, not to the socket's read.
      Error.captureStackTrace(error);
      reject(error);
    };
    client.query(query);
  });
}

/**
 * Runs one statement on `client`. When the current unit of work is abandoned (its client went away)
 * the statement is cancelled on the server, and the connection is given back only once the
 * server has taken the cancel, so it cannot stop someone else's statement. `timed`: no session
 * holds a statement_timeout for it, so its `limitMs` is kept here, with the same cancel.
 */
async function run<Row>(
  client: pg.PoolClient,
  config: string | pg.QueryConfig,
  scope: Scope,
  limitMs: number,
  timed = false,
): Promise<Row[]> {
  const unit = currentUnit();
  if (unit?.abandoned) throw new QueryCancelled();
  let cancelled: Promise<void> | undefined;
  const cancel = () => {
    cancelled ??= cancelBackend(client);
  };
  unit?.running.add(cancel);
  const timer = timed && limitMs > 0 ? setTimeout(cancel, limitMs) : undefined;
  try {
    const result = await submit(client, config);
    return result.rows as Row[];
  } catch (error) {
    // A broken connection stays what it is: the caller must discard it.
    if (isConnectionFailure(error)) throw error;
    if (unit?.abandoned) throw new QueryCancelled({ cause: error });
    if (isQueryCanceled(error)) throw new StatementTimeout(scope, limitMs, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
    unit?.running.delete(cancel);
    // Only when a cancel was sent: an `await` of nothing still costs a turn of the microtask queue.
    if (cancelled) await cancelled;
  }
}

function named(statement: Statement): pg.QueryConfig {
  if (statement.prepare === false) return unnamed(statement);
  return {
    name: statement.prepare ?? statementName(statement.text),
    text: statement.text,
    values: statement.values as unknown[],
  };
}

// Parsed and planned anew each time, in the same round trip as its execution.
function unnamed(statement: Statement): pg.QueryConfig {
  return { text: statement.text, values: statement.values as unknown[] };
}

export function openPostgres(options: PostgresOptions): Database {
  const { statementTimeoutMs, writeTimeoutMs, connectTimeoutMs } = { ...postgresDefaults, ...options };
  const sessions = options.preparedStatements ?? true;
  const directUrl = options.directUrl ?? options.url;
  const pool = openPool(options, sessions, statementTimeoutMs, connectTimeoutMs);
  // An idle connection that dies (server restart) must not crash the process; the pool drops it.
  pool.on("error", () => options.onConnectionLost?.());
  const pooled = connections(pool, options.poolSize, connectTimeoutMs);
  const { single, inTransaction, sent } = executors(pooled, {
    toQuery: sessions ? named : unnamed,
    timed: !sessions,
    statementTimeoutMs,
    writeTimeoutMs,
  });
  // Made on first use: only the commands that write through Prisma (seed, catalogue import) pay for it.
  let prisma: PrismaClient | undefined;
  const listener = openListener(directUrl, connectTimeoutMs);
  return {
    kind: "postgres",
    directUrl,
    get prisma() {
      prisma ??= new PrismaClient({ adapter: new PrismaPg(pool) });
      return prisma;
    },
    ...single,
    transaction: (work) => transaction(pooled, writeTimeoutMs, (client) => work(inTransaction(client))),
    listen: (channel, onPayload, onMissed, onLost) => listener.listen(channel, onPayload, onMissed, onLost),
    statementsByTarget: () => ({ primary: sent(), replica: 0 }),
    streams: new ConnectionBudget(options.streamConnections ?? Math.max(1, Math.floor(options.poolSize / 4))),
    async close() {
      await listener.close();
      await prisma?.$disconnect();
      await pool.end();
    },
    poolStats: () => ({
      max: options.poolSize,
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
  };
}

function openPool(
  options: PostgresOptions,
  sessions: boolean,
  statementTimeoutMs: number,
  connectTimeoutMs: number,
): pg.Pool {
  return new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    // Each connection keeps every statement it prepared; recycling bounds that memory
    // when clients send many distinct query shapes.
    maxUses: 20_000,
    connectionTimeoutMillis: connectTimeoutMs,
    // A connection whose server vanished without a word (a failover, a dropped network) is noticed.
    keepAlive: true,
    // Timestamps leave the database in UTC whatever the server's zone. Every statement has a
    // time-out; a write transaction sets its own (SET LOCAL) for its statements.
    ...(sessions
      ? { options: `-c TimeZone=UTC -c statement_timeout=${statementTimeoutMs}` }
      : // A pooler refuses startup options (PgBouncer: "unsupported startup parameter"), and a
        // session's SET would outlast our statement on a server connection others use next. TimeZone
        // is one of the parameters PgBouncer keeps per client and sets on whichever server connection
        // serves it; a read's time-out is kept by `run` instead.
        { onConnect: (client: pg.ClientBase) => client.query("SET TimeZone = 'UTC'") }),
  });
}

/** How statements are sent: named or not, and the time-out of each scope. */
interface Sending {
  readonly toQuery: (statement: Statement) => pg.QueryConfig;
  /** No session holds a statement's own time-out: `run` keeps it. */
  readonly timed: boolean;
  readonly statementTimeoutMs: number;
  readonly writeTimeoutMs: number;
}

/** The executor of statements of their own, and of the statements of one write transaction. */
function executors(pooled: Connections, sending: Sending) {
  const { toQuery, timed, statementTimeoutMs, writeTimeoutMs } = sending;
  // Statements sent, for /metrics: a replica's are counted as the replica's by ./replicas.ts.
  let sent = 0;
  const single: Executor = {
    query: <Row>(statement: Statement) => {
      countStatement();
      sent++;
      return withClient(pooled, (client) =>
        run<Row>(client, toQuery(statement), "statement", statementTimeoutMs, timed),
      );
    },
    async script(sql: string) {
      countStatement();
      sent++;
      await withClient(pooled, (client) => run(client, sql, "statement", statementTimeoutMs, timed));
    },
  };
  const inTransaction = (client: pg.PoolClient): Executor => ({
    async query<Row>(statement: Statement) {
      countStatement();
      sent++;
      return run<Row>(client, toQuery(statement), "write", writeTimeoutMs);
    },
    async script(sql: string) {
      countStatement();
      sent++;
      await run(client, sql, "write", writeTimeoutMs);
    },
  });
  return { single, inTransaction, sent: () => sent };
}

function transaction<T>(
  pooled: Connections,
  writeTimeoutMs: number,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withClient(pooled, async (client) => {
    // One round trip: the transaction and its statements' time-out.
    await client.query(`BEGIN; SET LOCAL statement_timeout = ${writeTimeoutMs}`);
    try {
      const result = await holdingConnection(currentUnit(), () => work(client));
      await client.query("COMMIT");
      return result;
    } catch (error) {
      // A connection that broke has nothing to roll back; withClient discards it, and one
      // whose ROLLBACK fails (still in the transaction) too.
      if (!isConnectionFailure(error)) await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  });
}

// Connects on the first LISTEN: only a server with live subscriptions holds this connection. A
// direct one: LISTEN lasts as long as the session, which a pooler's connection is not.
function openListener(directUrl: string, connectTimeoutMs: number): PgListener {
  return new PgListener(
    () =>
      new pg.Client({
        connectionString: directUrl,
        keepAlive: true,
        connectionTimeoutMillis: connectTimeoutMs,
        // Named, so an operator (or a test) can tell it in pg_stat_activity.
        application_name: "fleetgate-listen",
      }),
  );
}
