import type { KeyBox } from "../auth/key-box.ts";
import type { Permissions } from "../auth/permissions.ts";
import type { Database } from "../db/database.ts";
import { BadRequest } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { recordCommand } from "./audit.ts";
import { versionProblem } from "./endpoint-versions.ts";
import { type DeviceCall, fanOut } from "./fan-out.ts";
import type { NetworkGuard } from "./network-guard.ts";
import { outcomeOf, type ProxyOutcome } from "./outcome.ts";
import { findTargets, type TargetKeys } from "./targets.ts";

export const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;

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

export interface DeviceResult {
  readonly deviceId: number;
  readonly uuid: string;
  /** The device's answer; 502/504 when it could not be reached, 501 when its supervisor lacks the endpoint. */
  readonly statusCode: number;
  readonly ok: boolean;
  readonly body: unknown;
  readonly contentType?: string;
  readonly error?: string;
}

export interface ProxyContext {
  readonly db: Database;
  readonly model: Model;
  readonly permissions: Permissions;
  readonly actor: number;
  readonly keys: KeyBox;
  readonly guard: NetworkGuard;
  readonly timeoutMs: number;
  readonly concurrency: number;
  /** Told each command's per-device outcomes (/metrics). */
  readonly observe?: (outcomes: readonly ProxyOutcome[]) => void;
}

const NOT_IMPLEMENTED = 501;
const BAD_GATEWAY = 502;

/**
 * One command, many devices: finds the targets (./targets.ts), calls each device's supervisor with
 * its own key, and records write commands (./audit.ts).
 */
export async function proxyCommand(input: ProxyInput, context: ProxyContext): Promise<DeviceResult[]> {
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
  const rows = await findTargets(input, context);
  const writes = method !== "GET" && method !== "HEAD";

  const results: (DeviceResult | undefined)[] = rows.map((row) => {
    const refuse = (statusCode: number, error: string): DeviceResult => ({
      deviceId: row.id,
      uuid: row.uuid,
      statusCode,
      ok: false,
      body: null,
      error,
    });
    const tooOld = versionProblem(input.path, row.supervisor_version);
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
    return undefined;
  });
  const callable = rows.filter((_row, index) => results[index] === undefined);
  const calls: DeviceCall[] = callable.map((row) => {
    const appId = row.belongs_to__application;
    return {
      address: row.supervisor_api_address as string,
      port: row.supervisor_api_port as number,
      apiKey: context.keys.unseal(row.supervisor_api_key_ciphertext as string),
      path: input.appScoped ? input.path.replace(":appId", String(appId)) : input.path,
      data: input.appScoped ? { ...(data as object | undefined), appId } : (data as object | undefined),
    };
  });
  const outcomes = await fanOut(calls, {
    method,
    timeoutMs: context.timeoutMs,
    concurrency: context.concurrency,
  });
  callable.forEach((row, i) => {
    const outcome = outcomes[i];
    if (!outcome) return;
    results[rows.indexOf(row)] = {
      deviceId: row.id,
      uuid: row.uuid,
      statusCode: outcome.statusCode,
      ok: !outcome.error && outcome.statusCode < 400,
      body: outcome.body,
      ...(outcome.contentType ? { contentType: outcome.contentType } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
    };
  });
  const done = results as DeviceResult[];
  context.observe?.(done.map(outcomeOf));
  if (writes) {
    await recordCommand(context.db, { actor: context.actor, method, path: input.path, data, results: done });
  }
  return done;
}
