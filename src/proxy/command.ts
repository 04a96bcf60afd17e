import { recordCommand } from "./audit.ts";
import { callDevices, checkCommand } from "./device-call.ts";
import { outcomeOf } from "./outcome.ts";
import { keepRegeneratedKeys } from "./regenerated-key.ts";
import { findTargets } from "./targets.ts";
import type { DeviceResult, ProxyContext, ProxyInput } from "./types.ts";

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
