import { BAD_RESPONSE } from "./fan-out.ts";

/**
 * What became of one device's call, for /metrics: it answered (`ok` below 400, `device_error` from
 * 400), it did not answer in time (`timeout`), it could not be reached (`unreachable`: refused, reset,
 * no address reported, or an address outside PROXY_ALLOWED_NETWORKS), or its supervisor is too old
 * for the endpoint and was not called (`unsupported`).
 */
export type ProxyOutcome = "ok" | "device_error" | "timeout" | "unreachable" | "unsupported";

export const proxyOutcomes: readonly ProxyOutcome[] = [
  "ok",
  "device_error",
  "timeout",
  "unreachable",
  "unsupported",
];

export function outcomeOf(result: {
  readonly statusCode: number;
  readonly ok: boolean;
  readonly error?: string;
}): ProxyOutcome {
  // An error is the gateway's own word (fan-out.ts, command.ts); without one the device answered.
  if (!result.error || result.error === BAD_RESPONSE) return result.ok ? "ok" : "device_error";
  if (result.statusCode === 504) return "timeout";
  if (result.statusCode === 501) return "unsupported";
  return "unreachable";
}
