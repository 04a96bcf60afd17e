import { BadRequest } from "../errors.ts";
import { versionProblem } from "./endpoint-versions.ts";
import { type CallOutcome, callSupervisor, type DeviceCall, fanOut } from "./fan-out.ts";
import type { TargetDevice } from "./targets.ts";
import type { DeviceCallContext, DeviceResult, SupervisorCommand } from "./types.ts";

export const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;

const NOT_IMPLEMENTED = 501;
const BAD_GATEWAY = 502;

/** Checks a command's method, path and data; refuses it with 400 before any device is looked up. */
export function checkCommand(input: {
  readonly path: string;
  readonly method?: unknown;
  readonly data?: unknown;
  readonly appScoped?: boolean;
}): SupervisorCommand {
  const method = input.method === undefined ? "POST" : String(input.method).toUpperCase();
  if (!(methods as readonly string[]).includes(method))
    throw new BadRequest(`Unknown method '${String(input.method)}'`);
  // A supervisor path and nothing else: no parent segments, no encoded characters.
  const path = input.appScoped ? input.path.replace(":appId", "0") : input.path;
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(path) || path.split("/").includes("..")) {
    throw new BadRequest(`Invalid supervisor path '${input.path}'`);
  }
  const data = input.data;
  if (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data))) {
    throw new BadRequest("'data' must be an object");
  }
  return { method, path: input.path, data: data as object | undefined, appScoped: input.appScoped === true };
}

/**
 * What to send one device, or its answer without a call: its supervisor predates the endpoint, has
 * not said where it listens, or listens outside the allowed networks. Synchronous (the key is
 * unsealed here), so a fan-out prepares every device before its first call.
 */
export function prepareCall(
  row: TargetDevice,
  command: SupervisorCommand,
  context: DeviceCallContext,
): { readonly call: DeviceCall } | { readonly refused: DeviceResult } {
  const refuse = (statusCode: number, error: string) => ({
    refused: { deviceId: row.id, uuid: row.uuid, statusCode, ok: false, body: null, error },
  });
  const tooOld = versionProblem(command.path, row.supervisor_version);
  if (tooOld) return refuse(NOT_IMPLEMENTED, tooOld);
  if (!row.supervisor_api_address || !row.supervisor_api_port || !row.supervisor_api_key_ciphertext) {
    return refuse(BAD_GATEWAY, "The device has not reported where its supervisor listens");
  }
  if (!context.guard.allows(row.supervisor_api_address)) {
    return refuse(
      BAD_GATEWAY,
      `The device's address ${row.supervisor_api_address} is outside the networks the proxy may call`,
    );
  }
  const appId = row.belongs_to__application;
  return {
    call: {
      address: row.supervisor_api_address,
      port: row.supervisor_api_port,
      apiKey: context.keys.unseal(row.supervisor_api_key_ciphertext),
      path: command.appScoped ? command.path.replace(":appId", String(appId)) : command.path,
      data: command.appScoped ? { ...command.data, appId } : command.data,
    },
  };
}

/** A device's answer as the proxy reports it. */
function resultOf(row: TargetDevice, outcome: CallOutcome): DeviceResult {
  return {
    deviceId: row.id,
    uuid: row.uuid,
    statusCode: outcome.statusCode,
    ok: !outcome.error && outcome.statusCode < 400,
    body: outcome.body,
    ...(outcome.contentType ? { contentType: outcome.contentType } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/** Sends `command` to one device (a job's worker records each answer as it comes). */
export async function callDevice(
  row: TargetDevice,
  command: SupervisorCommand,
  context: DeviceCallContext,
): Promise<DeviceResult> {
  const prepared = prepareCall(row, command, context);
  if ("refused" in prepared) return prepared.refused;
  return resultOf(
    row,
    await callSupervisor(prepared.call, { method: command.method, timeoutMs: context.timeoutMs }),
  );
}

/**
 * Sends `command` to every device, at most `concurrency` at once; the answers come back in the rows'
 * order. Every device is prepared first, so the calls run back to back.
 */
export async function callDevices(
  rows: readonly TargetDevice[],
  command: SupervisorCommand,
  context: DeviceCallContext & { readonly concurrency: number },
): Promise<DeviceResult[]> {
  const prepared = rows.map((row) => prepareCall(row, command, context));
  const calls = prepared.flatMap((each) => ("call" in each ? [each.call] : []));
  const outcomes = await fanOut(calls, {
    method: command.method,
    timeoutMs: context.timeoutMs,
    concurrency: context.concurrency,
  });
  let next = 0;
  return prepared.map((each, index) =>
    "refused" in each ? each.refused : resultOf(rows[index] as TargetDevice, outcomes[next++] as CallOutcome),
  );
}
