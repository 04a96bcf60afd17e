import { setTimeout as delay } from "node:timers/promises";

// How long the simulated device takes for each thing it does. Real devices take
// minutes; the defaults take about two seconds so a person can watch the cycle,
// and tests pass a few milliseconds.
export interface Timings {
  /** A whole download, 0 to 100 %. */
  readonly downloadMs: number;
  /** Installing a downloaded release. */
  readonly installMs: number;
  /** Stopping or starting the application, each. */
  readonly stepMs: number;
  /** How long the LED blinks after /v1/blink (the real one: 15 s). */
  readonly blinkMs: number;
}

export const DEFAULT_TIMINGS: Timings = { downloadMs: 1500, installMs: 400, stepMs: 300, blinkMs: 15_000 };

/** Resolves after `ms`; rejects with an AbortError once the supervisor stops. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal });
}

export const isAbort = (error: unknown) => (error as Error)?.name === "AbortError";
