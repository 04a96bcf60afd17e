import type { Permissions } from "../auth/permissions.ts";
import type { Database } from "../db/database.ts";
import type { KeyBox } from "../devices/key-box.ts";
import { BadRequest, Forbidden, NotFound } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { planWriteTarget } from "../odata/plan.ts";
import type { Expr } from "../odata/query.ts";
import { compileProxyTargets } from "../odata/sql/compile.ts";
import { redactMembers } from "../redact.ts";
import { versionProblem } from "./endpoint-versions.ts";
import { type DeviceCall, fanOut } from "./fan-out.ts";
import type { NetworkGuard } from "./network-guard.ts";

export const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;

export interface ProxyInput {
  /** The supervisor path: `/v1/reboot`, `/ping`. */
  readonly path: string;
  readonly method?: unknown;
  readonly uuid?: unknown;
  readonly deviceId?: unknown;
  readonly appId?: unknown;
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
}

interface TargetRow {
  id: number;
  uuid: string;
  belongs_to__application: number;
  supervisor_version: string | null;
  supervisor_api_address: string | null;
  supervisor_api_port: number | null;
  supervisor_api_key_ciphertext: string | null;
  may_write: boolean;
}

const NOT_IMPLEMENTED = 501;
const BAD_GATEWAY = 502;

function integer(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw new BadRequest(`'${name}' must be an integer`);
  return value;
}

/** The target filter: the given keys ANDed, online devices only. */
function targetFilter(input: ProxyInput): Expr {
  const uuid = input.uuid;
  if (uuid !== undefined && typeof uuid !== "string") throw new BadRequest("'uuid' must be a string");
  const deviceId = integer("deviceId", input.deviceId);
  const appId = integer("appId", input.appId);
  const equal = (field: string, value: Expr): Expr => ({
    kind: "comparison",
    op: "eq",
    left: { kind: "path", segments: [field] },
    right: value,
  });
  const keys: Expr[] = [
    ...(uuid !== undefined ? [equal("uuid", { kind: "text", value: uuid })] : []),
    ...(deviceId !== undefined ? [equal("id", { kind: "number", value: deviceId })] : []),
    ...(appId !== undefined ? [equal("belongs_to__application", { kind: "number", value: appId })] : []),
  ];
  if (keys.length === 0) throw new BadRequest("At least one filter must be specified");
  return {
    kind: "logical",
    op: "and",
    operands: [...keys, equal("is_online", { kind: "boolean", value: true })],
  };
}

/**
 * One command, many devices: finds the targets with the read path's plan (the caller's row
 * predicate, online only), refuses any command to devices the caller may only read, calls each
 * device's supervisor with its own key, and records write commands.
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
  const plan = planWriteTarget(
    { resource: "device", count: false, options: { filter: targetFilter(input) } },
    { model: context.model, permissions: context.permissions },
  );
  const rows = await context.db.query<TargetRow>(compileProxyTargets(plan));
  // A device the caller cannot see is one that does not exist: the same 404 either way.
  if (rows.length === 0) throw new NotFound("No online device(s) found");
  // Reading a device's supervisor is operating it (it answers with its configuration and
  // environment): every method needs write permission, GET included.
  if (rows.some((row) => !row.may_write)) throw new Forbidden("You may not send commands to these devices");
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
  if (writes) await record(context, method, input.path, data, done);
  return done;
}

/** Who sent which command to which devices, and what each answered. */
async function record(
  context: ProxyContext,
  method: string,
  path: string,
  data: unknown,
  results: readonly DeviceResult[],
): Promise<void> {
  await context.db.query({
    text: `INSERT INTO "supervisor_command" ("is_issued_by__actor", "method", "path", "data", "results")
           VALUES ($1::int4, $2::text, $3::text, $4::jsonb, $5::jsonb)`,
    values: [
      context.actor,
      method,
      path,
      // The audit keeps what was asked, not the credentials in it (a host config's proxy password).
      data === undefined ? null : JSON.stringify(redactMembers(data)),
      JSON.stringify(
        results.map(({ deviceId, uuid, statusCode, ok, error }) => ({
          deviceId,
          uuid,
          statusCode,
          ok,
          ...(error ? { error } : {}),
        })),
      ),
    ],
  });
}
