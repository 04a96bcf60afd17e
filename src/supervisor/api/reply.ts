// What a route answers, and the value conventions of the supervisor's v1 API.

export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  /** The parsed body; `{}` when there is none, as express' body parsers leave it. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** A string is sent as text, anything else as JSON, `undefined` as an empty body. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
}

export const text = (status: number, body: string): Reply => ({ status, body });
export const json = (status: number, body: object): Reply => ({ status, body });
/** The error middleware's shape: `{status: "failed", message}`. */
export const failed = (status: number, message: string): Reply => json(status, { status: "failed", message });

// The real supervisor's checkTruthy: these and nothing else turn `force` on.
const TRUTHY: readonly unknown[] = [true, "true", 1, "1", "on"];
export const isTruthy = (value: unknown) => TRUTHY.includes(value);

/** A positive integer id, given as a number or as digits; anything else is no id. */
export function toAppId(value: unknown): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value === "string" && /^\d{1,15}$/.test(value) && Number(value) > 0) return Number(value);
  return null;
}
