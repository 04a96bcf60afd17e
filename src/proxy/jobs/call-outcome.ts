import type { Outcome } from "../../core/job-lifecycle/answer.ts";
import type { Claim } from "../../core/job-lifecycle/claim.ts";
import { outcomeOf } from "../outcome.ts";
import type { TargetDevice } from "../targets.ts";
import type { DeviceResult } from "../types.ts";

// What a lane records of a device it called: its answer, or another try.

export interface RetryLimits {
  /** Calls a device gets at most when it cannot be reached or does not answer in time. */
  readonly attempts: number;
  /** The wait before the first retry, doubled for each one after it. */
  readonly retryDelaySeconds: number;
}

const BAD_GATEWAY = 502;

// A device that could not be reached or did not answer in time is worth another try; one that
// answered (whatever it said), or whose supervisor is too old, is not.
const retryable = (result: DeviceResult) => {
  const outcome = outcomeOf(result);
  return outcome === "timeout" || outcome === "unreachable";
};

/** The claimed device's result to record: answered, or (with its backoff) to try again. */
export function outcomeOfCall(claim: Claim, result: DeviceResult, limits: RetryLimits): Outcome {
  return {
    id: claim.id,
    status: result.ok ? "ok" : "failed",
    statusCode: result.statusCode,
    body: result.body,
    error: result.error,
    retryAfterSeconds:
      retryable(result) && claim.attempts < limits.attempts
        ? limits.retryDelaySeconds * 2 ** (claim.attempts - 1)
        : undefined,
  };
}

/** A call that threw instead of answering: the device's result is a 502 with its message. */
export const thrownCall =
  (device: TargetDevice) =>
  (error: unknown): DeviceResult => ({
    deviceId: device.id,
    uuid: device.uuid,
    statusCode: BAD_GATEWAY,
    ok: false,
    body: null,
    error: error instanceof Error ? error.message : String(error),
  });
