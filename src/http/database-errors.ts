import { isConnectionFailure, QueryCancelled, StatementTimeout } from "../db/failures.ts";
import { FleetgateError, GatewayTimeout, ServiceUnavailable } from "../errors.ts";

// How soon a client should try again while the database is away: a restart or a failover is
// usually seconds, and the pool reconnects on the first request after it.
const RETRY_AFTER_SECONDS = 1;

// The setting behind each time-out, so the message names what an operator can change.
const timeoutSettings = {
  statement: "DATABASE_STATEMENT_TIMEOUT_MS",
  write: "DATABASE_WRITE_TIMEOUT_MS",
} as const;

/**
 * The client's view of the database failing under a request: unreachable or dropped → 503 with
 * Retry-After; a statement over its time-out → 504 naming the limit; a statement cancelled
 * because its client went away → 499 (nginx's "client closed request", for the log: nobody reads
 * the reply). Database messages never reach the client.
 */
export function databaseFailure(error: unknown): FleetgateError | undefined {
  if (error instanceof StatementTimeout) {
    return new GatewayTimeout(
      `The request ran longer than the ${error.scope === "write" ? "write " : ""}statement time-out of ${error.limitMs} ms (${timeoutSettings[error.scope]}); ask for less: a narrower $filter, a $top, fewer expansions`,
    );
  }
  if (error instanceof QueryCancelled) {
    return new FleetgateError("The client closed the request", 499, "CLIENT_CLOSED_REQUEST");
  }
  if (isConnectionFailure(error)) {
    return new ServiceUnavailable("The database is unavailable; try again shortly", RETRY_AFTER_SECONDS);
  }
  return undefined;
}
