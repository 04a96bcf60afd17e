import { ConnectionsBusy, isConnectionFailure, QueryCancelled, StatementTimeout } from "../db/failures.ts";
import { BadRequest, Conflict, FleetgateError, GatewayTimeout, ServiceUnavailable } from "../errors.ts";

// The one table from what was thrown to what the client is told, for every surface. The
// database's own texts never reach a client: a constraint's `detail` holds the row's values, and a
// data exception can quote the value at fault. Messages name fields as the model names them.

// How soon a client should try again while the database is away (a restart or a failover is
// usually seconds, and the pool reconnects on the first request after it) or every connection is
// busy (each statement gives its connection back within the statement time-out).
const RETRY_AFTER_SECONDS = 1;

// The setting behind each time-out, so the message names what an operator can change.
const timeoutSettings = {
  statement: "DATABASE_STATEMENT_TIMEOUT_MS",
  write: "DATABASE_WRITE_TIMEOUT_MS",
} as const;

/**
 * `Key (device, tag_key)=(1, k) already exists.` → ["device", "tag_key"]: our column names, never the
 * values. A key on `lower(email)` (unique without case) names its column, `email`.
 */
function keyColumns(detail: string | undefined): string[] {
  const match = /^Key \(((?:[^()]|\([^()]*\))*)\)=/.exec(detail ?? "");
  return match?.[1]
    ? match[1].split(", ").map((name) => name.replace(/^lower\((.*)\)$/, "$1").replaceAll('"', ""))
    : [];
}

const quoted = (columns: readonly string[]) => `"${columns.join('", "')}"`;

interface DatabaseError {
  readonly code?: unknown;
  readonly detail?: string;
  readonly column?: string;
  readonly constraint?: string;
}

type Translate = (error: DatabaseError) => FleetgateError;

function unique(error: DatabaseError) {
  // pinejs wire: 409 whose message contains "unique" (pinejs-client's upsert relies on it).
  const columns = keyColumns(error.detail);
  return new Conflict(
    columns.length ? `${quoted(columns)} must be unique.` : "Unique key constraint violated",
  );
}

function reference(error: DatabaseError) {
  const referencing = /referenced from table "([a-z_]+)"/.exec(error.detail ?? "")?.[1];
  if (referencing) return new Conflict(`Data is referenced by ${referencing}.`);
  const columns = keyColumns(error.detail);
  return new BadRequest(
    columns.length
      ? `${quoted(columns)} refers to a row that does not exist`
      : "A referenced row does not exist",
  );
}

// An expression's data error is raised by the caller's own input on one of their own rows: the
// compiler keeps expressions that can fail away from rows they cannot see (see guardedWhere).
const dataError = (message: string) => () => new BadRequest(message);
const unstorableText = dataError("A text contains a character the database cannot store (such as NUL)");

/** By SQLSTATE, as both drivers report it. */
const bySqlState: Record<string, Translate> = {
  "23505": unique,
  "23503": reference, // foreign_key_violation
  "23001": reference, // restrict_violation: ON DELETE RESTRICT
  "23502": (error) => new BadRequest(`"${error.column ?? "?"}" cannot be null`),
  "23514": (error) =>
    new BadRequest(
      error.constraint ? `The rule ${error.constraint} is not met` : "A check constraint failed",
    ),
  "22012": dataError("Division by zero in 'div' or 'mod'"),
  "22003": dataError("A number is out of range in an arithmetic operation ('add', 'sub', 'mul', 'div')"),
  "22008": dataError("A date or time is out of range"),
  "22021": unstorableText,
  "22P05": unstorableText,
  "54000": dataError("A value grows past the database's limit in 'replace' or 'concat'"),
  "22P02": dataError("A literal is not valid for the type it is compared with"),
  "22007": dataError("A date or time literal is not valid"),
};

// Class 22 is "data exception": the client's input caused it.
const DATA_EXCEPTION_CLASS = "22";

/**
 * The client error behind an error thrown anywhere, or undefined when it is nothing a client caused
 * or should be told of (a bug: the surface answers 500 and logs it).
 */
export function clientErrorOf(error: unknown): FleetgateError | undefined {
  if (error instanceof FleetgateError) return error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  // The HTTP framework's own client errors (bad JSON, a body too large, an unsupported media type).
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new FleetgateError((error as Error).message, status, "BAD_REQUEST");
  }
  return databaseError(error);
}

function databaseError(error: unknown): FleetgateError | undefined {
  if (error instanceof StatementTimeout) {
    return new GatewayTimeout(
      `The request ran longer than the ${error.scope === "write" ? "write " : ""}statement time-out of ${error.limitMs} ms (${timeoutSettings[error.scope]}); ask for less: a narrower $filter, a $top, fewer expansions`,
    );
  }
  if (error instanceof QueryCancelled) {
    // nginx's "client closed request", for the log: nobody reads the reply.
    return new FleetgateError("The client closed the request", 499, "CLIENT_CLOSED_REQUEST");
  }
  // The database is up and every connection is serving others: a busy server, not an outage, so
  // neither the client nor the operator goes looking for one.
  if (error instanceof ConnectionsBusy) {
    return new ServiceUnavailable("The server is busy; try again shortly", RETRY_AFTER_SECONDS);
  }
  if (isConnectionFailure(error)) {
    return new ServiceUnavailable("The database is unavailable; try again shortly", RETRY_AFTER_SECONDS);
  }
  const found = (error ?? {}) as DatabaseError;
  const sqlState = found.code;
  if (typeof sqlState !== "string" || sqlState.length !== 5) return undefined;
  const translate = bySqlState[sqlState];
  if (translate) return translate(found);
  if (sqlState.startsWith(DATA_EXCEPTION_CLASS))
    return new BadRequest(`The request's values could not be evaluated (SQLSTATE ${sqlState})`);
  return undefined;
}
