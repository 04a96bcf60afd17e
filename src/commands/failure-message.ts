import { ConnectionFailed } from "../db/failures.ts";

// Loaded by the CLI itself before any command runs, so it imports nothing heavier than the
// database's failure types.

interface Failure {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
}

/** The first error in `error`'s chain of causes (and of an AggregateError's errors) that `test` takes. */
function findCause(error: unknown, test: (failure: Failure) => boolean): Failure | undefined {
  for (
    let at = error as Failure | undefined, depth = 0;
    at && depth < 10;
    at = at.cause as Failure, depth++
  ) {
    if (test(at)) return at;
    if (at instanceof AggregateError) {
      const inner = at.errors.map((each) => findCause(each, test)).find(Boolean);
      if (inner) return inner;
    }
  }
  return undefined;
}

const causeWithCode = (error: unknown, codes: readonly string[]) =>
  findCause(error, (failure) => typeof failure.code === "string" && codes.includes(failure.code));

/** `postgres://user:secret@db:5432/fleetgate` → `db:5432`: where, without the credentials. */
function serverOf(databaseUrl: string | undefined): string {
  try {
    const url = new URL(databaseUrl ?? "");
    return `${url.hostname}:${url.port || "5432"}`;
  } catch {
    return "the server of DATABASE_URL";
  }
}

/**
 * What a command (serve included) prints when it stops: a PostgreSQL that could not be used says
 * why in the operator's terms (no such database, credentials refused, nothing listening) rather
 * than "could not get a database connection"; anything else is its own message.
 */
export function failureMessage(error: unknown, databaseUrl = process.env.DATABASE_URL): string {
  const message = error instanceof Error ? error.message : String(error);
  // Only a connection to the database: a device command's refused call to the API is its own.
  if (!findCause(error, (failure) => failure instanceof ConnectionFailed)) return message;
  const server = serverOf(databaseUrl);
  const missing = causeWithCode(error, ["3D000"]);
  if (missing) {
    const name = /database "(.*)" does not exist/.exec(String(missing.message))?.[1] ?? "";
    return `PostgreSQL at ${server} has no database "${name}" (DATABASE_URL): create it (\`createdb ${name}\`, or CREATE DATABASE), or point DATABASE_URL at one that exists`;
  }
  if (causeWithCode(error, ["28P01", "28000"]))
    return `PostgreSQL at ${server} refused the user or password of DATABASE_URL`;
  if (causeWithCode(error, ["ECONNREFUSED"]))
    return `Nothing accepts connections at ${server} (DATABASE_URL): is PostgreSQL running there?`;
  return message;
}
