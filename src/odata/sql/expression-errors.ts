import { BadRequest } from "../../errors.ts";

// PostgreSQL errors that a caller's own expression raises on one of their own rows (the compiler keeps
// expressions that can fail away from rows they cannot see: see guardedWhere). The client learns which
// operation failed, never PostgreSQL's text, which can quote the value at fault.
const byState: Record<string, string> = {
  "22012": "Division by zero in 'div' or 'mod'",
  "22003": "A number is out of range in an arithmetic operation ('add', 'sub', 'mul', 'div')",
  "22008": "A date or time is out of range",
  "22021": "A text contains a character the database cannot store (such as NUL)",
  "22P05": "A text contains a character the database cannot store (such as NUL)",
  "54000": "A value grows past the database's limit in 'replace' or 'concat'",
  "22P02": "A literal is not valid for the type it is compared with",
  "22007": "A date or time literal is not valid",
};

// Class 22 is "data exception": the client's input caused it.
const DATA_EXCEPTION_CLASS = "22";

/** The neutral client error for a PostgreSQL error raised by the caller's input, if it is one. */
export function expressionError(error: unknown): BadRequest | undefined {
  const sqlState = (error as { code?: unknown } | null)?.code;
  if (typeof sqlState !== "string" || sqlState.length !== 5) return undefined;
  const message = byState[sqlState];
  if (message) return new BadRequest(message);
  if (sqlState.startsWith(DATA_EXCEPTION_CLASS))
    return new BadRequest(`The request's values could not be evaluated (SQLSTATE ${sqlState})`);
  return undefined;
}
