import type { Permissions } from "../auth/permissions.ts";
import type { Database } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { recordCommand } from "./audit.ts";
import { callDevices, checkCommand, type DeviceCallContext, type DeviceResult } from "./device-call.ts";
import type { CommandJobs } from "./jobs/queue.ts";
import { outcomeOf, type ProxyOutcome } from "./outcome.ts";
import { keepRegeneratedKeys } from "./regenerated-key.ts";
import { findTargets, type TargetKeys } from "./targets.ts";

export { type DeviceResult, methods } from "./device-call.ts";

export interface ProxyInput extends TargetKeys {
  /** The supervisor path: `/v1/reboot`, `/ping`. */
  readonly path: string;
  readonly method?: unknown;
  readonly data?: unknown;
  /**
   * The command addresses each device's own fleet (the supervisor's app): `:appId` in the path and
   * `appId` in the data become the fleet id of the device it is sent to.
   */
  readonly appScoped?: boolean;
}

export interface ProxyContext extends DeviceCallContext {
  readonly db: Database;
  readonly model: Model;
  readonly permissions: Permissions;
  readonly actor: number;
  readonly concurrency: number;
  /** Told each command's per-device outcomes (/metrics). */
  readonly observe?: (outcomes: readonly ProxyOutcome[]) => void;
  /** The job queue, for commands sent as jobs (`Prefer: respond-async`); none: refused. */
  readonly jobs?: CommandJobs;
}

/**
 * One command, many devices, answered at once: finds the targets (./targets.ts), calls each
 * device's supervisor with its own key (./device-call.ts, as a job's worker does), and records
 * write commands (./audit.ts).
 */
export async function proxyCommand(input: ProxyInput, context: ProxyContext): Promise<DeviceResult[]> {
  const command = checkCommand(input);
  const rows = await findTargets(input, context);
  const results = await callDevices(rows, command, context);
  context.observe?.(results.map(outcomeOf));
  // Before the answer goes back: the caller's next command uses the key the device has now.
  await keepRegeneratedKeys(
    context.db,
    context.keys,
    command,
    rows.map((row, index) => [row, results[index] as DeviceResult] as const),
  );
  if (command.method !== "GET" && command.method !== "HEAD") {
    await recordCommand(context.db, {
      actor: context.actor,
      method: command.method,
      path: input.path,
      data: command.data,
      results,
    });
  }
  return results;
}
