// What a route answers, and the value conventions of the supervisor's v1 API.

export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  /** The parsed body; `{}` when there is none, as express' body parsers leave it. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** Where a streamed answer goes (POST /v2/journal-logs). */
export interface ReplySink {
  write(chunk: string): void;
  end(): void;
  /** The client went away, or the supervisor closes. */
  onClose(listener: () => void): void;
}

/** A string is sent as text, anything else as JSON, `undefined` as an empty body; `stream` as text. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly stream?: (sink: ReplySink) => void;
}

export const text = (status: number, body: string): Reply => ({ status, body });
export const json = (status: number, body: object): Reply => ({ status, body });
/** The error middleware's shape: `{status: "failed", message}`. */
export const failed = (status: number, message: string): Reply => json(status, { status: "failed", message });

// The real supervisor's checkTruthy (lib/validation.ts): a string is lower-cased first, so
// "TRUE" and "On" count, and these and nothing else turn `force` on.
const TRUTHY: readonly unknown[] = [true, "true", 1, "1", "on"];
export const isTruthy = (value: unknown) =>
  TRUTHY.includes(typeof value === "string" ? value.toLowerCase() : value);

// The real checkInt: digits with optional trailing zero decimals ("1.0", "7."), so "1.0" is app 1.
const NUMERALS = /^-?\d+\.?0*$/;

/** A positive integer id, given as a number or as numerals; anything else is no id. */
export function toAppId(value: unknown): number | null {
  if (typeof value !== "number" && typeof value !== "string") return null;
  if (!NUMERALS.test(String(value))) return null;
  const id = Number(value);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}
