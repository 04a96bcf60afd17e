import { MAY_WRITE } from "../core/plan.ts";
import { type Expr, idIn } from "../core/query.ts";
import { type ReadContext, readRows } from "../core/read.ts";
import { BadRequest, Forbidden, NotFound } from "../errors.ts";

/** Which devices a command goes to: any of the keys, ANDed. */
export interface TargetKeys {
  readonly uuid?: unknown;
  readonly deviceId?: unknown;
  readonly appId?: unknown;
}

/** A target device, with where its supervisor listens (hidden columns no API returns). */
export interface TargetDevice {
  readonly id: number;
  readonly uuid: string;
  readonly belongs_to__application: number;
  readonly supervisor_version: string | null;
  readonly supervisor_api_address: string | null;
  readonly supervisor_api_port: number | null;
  readonly supervisor_api_key_ciphertext: string | null;
}

/** The columns of a target device the proxy reads (some hidden: a system read). */
export const targetColumns = [
  "id",
  "uuid",
  "belongs_to__application",
  "supervisor_version",
  "supervisor_api_address",
  "supervisor_api_port",
  "supervisor_api_key_ciphertext",
];

function integer(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value))
    throw new BadRequest(`'${name}' must be an integer`);
  return value;
}

/** The target filter: the given keys ANDed, online devices only. */
function targetFilter(keys: TargetKeys): Expr {
  const uuid = keys.uuid;
  if (uuid !== undefined && typeof uuid !== "string") throw new BadRequest("'uuid' must be a string");
  const deviceId = integer("deviceId", keys.deviceId);
  const appId = integer("appId", keys.appId);
  const equal = (field: string, value: Expr): Expr => ({
    kind: "comparison",
    op: "eq",
    left: { kind: "path", segments: [field] },
    right: value,
  });
  const given: Expr[] = [
    ...(uuid !== undefined ? [equal("uuid", { kind: "text", value: uuid })] : []),
    ...(deviceId !== undefined ? [equal("id", { kind: "number", value: deviceId })] : []),
    ...(appId !== undefined ? [equal("belongs_to__application", { kind: "number", value: appId })] : []),
  ];
  if (given.length === 0) throw new BadRequest("At least one filter must be specified");
  return {
    kind: "logical",
    op: "and",
    operands: [...given, equal("is_online", { kind: "boolean", value: true })],
  };
}

async function readTargets<Row>(
  keys: TargetKeys,
  context: Omit<ReadContext, "format" | "system">,
  columns: readonly string[],
): Promise<Row[]> {
  const rows = await readRows<Row & { [MAY_WRITE]: boolean }>(
    {
      resource: "device",
      count: false,
      options: { filter: targetFilter(keys), select: [...columns, MAY_WRITE] },
    },
    { ...context, format: "v4", system: true },
  );
  // A device the caller cannot see is one that does not exist: the same 404 either way.
  if (rows.length === 0) throw new NotFound("No online device(s) found");
  if (rows.some((row) => !row[MAY_WRITE])) throw new Forbidden("You may not send commands to these devices");
  return rows;
}

/**
 * The online devices the keys name, read through the planner under the caller's row predicate.
 * Every one must be writable by the caller: reading a device's supervisor is operating it (it
 * answers with its configuration and environment), so every method needs write permission.
 */
export function findTargets(
  keys: TargetKeys,
  context: Omit<ReadContext, "format" | "system">,
): Promise<TargetDevice[]> {
  return readTargets<TargetDevice>(keys, context, targetColumns);
}

/** The ids of the same devices, checked the same way: a job's targets (its worker reads the rest later). */
export async function findTargetIds(
  keys: TargetKeys,
  context: Omit<ReadContext, "format" | "system">,
): Promise<number[]> {
  return (await readTargets<{ id: number }>(keys, context, ["id"])).map((row) => row.id);
}

/**
 * The devices among `ids` the caller may write now, with where their supervisors listen: a job's
 * batch reads its devices again before it calls them, under its sender's rights as they are then.
 * A device left out is one the caller may no longer write, or no longer see.
 */
export async function findWritableDevices(
  ids: readonly number[],
  context: Omit<ReadContext, "format" | "system">,
): Promise<Map<number, TargetDevice>> {
  if (ids.length === 0) return new Map();
  const rows = await readRows<TargetDevice & { [MAY_WRITE]: boolean }>(
    {
      resource: "device",
      count: false,
      options: { filter: idIn(ids), select: [...targetColumns, MAY_WRITE] },
    },
    { ...context, format: "v4", system: true },
  );
  return new Map(rows.filter((row) => row[MAY_WRITE]).map((row) => [row.id, row]));
}
