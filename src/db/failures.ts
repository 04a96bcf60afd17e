// What can go wrong between us and the database that is not the statement's own fault. The core's
// error table maps these for every surface (src/core/client-errors.ts); nothing here knows about HTTP.

/** A statement ran past its `statement_timeout` and PostgreSQL stopped it. */
export class StatementTimeout extends Error {
  constructor(
    /** Which time-out applied: a statement of its own (a read) or one inside a write transaction. */
    readonly scope: "statement" | "write",
    readonly limitMs: number,
    options?: ErrorOptions,
  ) {
    super(`statement timed out after ${limitMs} ms`, options);
    this.name = "StatementTimeout";
  }
}

/** The statement was cancelled because the work it belonged to was abandoned (its client went away). */
export class QueryCancelled extends Error {
  constructor(options?: ErrorOptions) {
    super("statement cancelled: its client went away", options);
    this.name = "QueryCancelled";
  }
}

/**
 * No connection could be had: the server refused or did not answer, or refused us (it is starting,
 * shutting down, full, or not accepting connections to this database). Whatever the server said,
 * the request did not run.
 */
export class ConnectionFailed extends Error {
  constructor(options?: ErrorOptions) {
    super("could not get a database connection", options);
    this.name = "ConnectionFailed";
  }
}

/**
 * Every pooled connection stayed busy serving others past the connect time-out. The database is up:
 * this server has more to do than its pool (DATABASE_POOL_SIZE) can take, and the request did not run.
 */
export class ConnectionsBusy extends Error {
  constructor(
    readonly waitedMs: number,
    options?: ErrorOptions,
  ) {
    super(`every database connection stayed busy for ${waitedMs} ms`, options);
    this.name = "ConnectionsBusy";
  }
}

// SQLSTATEs that say the connection or the server is going or gone, not that the statement was wrong.
const CONNECTION_EXCEPTION_CLASS = "08";
const unavailableStates = new Set([
  "57P01", // admin_shutdown: pg_terminate_backend, a fast shutdown, a failover
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up or in recovery
  "53300", // too_many_connections
  "25P03", // idle_in_transaction_session_timeout
  "57P05", // idle_session_timeout
]);

// Socket errors of Node's net and dns modules.
const socketErrors = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

// pg raises these as plain Errors without a code.
const driverMessages = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /is not queryable$/,
];

/** SQLSTATE 57014, query_canceled: a statement time-out, or a cancel request. */
export function isQueryCanceled(error: unknown): boolean {
  return codeOf(error) === "57014";
}

/**
 * Whether `error` means the database could not be reached or dropped the connection (a restart, a
 * failover, a terminated backend): the statement may well succeed if tried again shortly, and the
 * connection it ran on must not be reused. Not a wait for a busy pool (`ConnectionsBusy`).
 */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof ConnectionFailed) return true;
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (code !== undefined) {
    if (unavailableStates.has(code) || socketErrors.has(code)) return true;
    if (code.length === 5 && code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  }
  if (driverMessages.some((pattern) => pattern.test(error.message))) return true;
  // Connecting to several addresses (localhost: ::1 and 127.0.0.1) fails with all of their errors.
  return error instanceof AggregateError && error.errors.some(isConnectionFailure);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
