// The OData semantics the read tests expect, written in JavaScript: expectations are computed with
// these from the rows a test inserted, never by asking the compiler or SQL. The README's "What a query
// may say" is the contract; where it is silent, the rules below are the project's decisions.

import type { Node } from "./filter-ast.ts";
import { DivisionByZero, evaluate, type OracleRows } from "./oracle-eval.ts";

export { DivisionByZero, OracleRows } from "./oracle-eval.ts";

export type Op = "eq" | "ne" | "gt" | "ge" | "lt" | "le";
export const ops: readonly Op[] = ["eq", "ne", "gt", "ge", "lt", "le"];

export type Scalar = number | string | boolean | Date | null;
const plain = (value: Scalar) =>
  value instanceof Date ? value.getTime() : typeof value === "boolean" ? Number(value) : value;

/** OData comparison: `ne` holds for null, ordering comparisons never hold for null. */
export function cmp(op: Op, left: Scalar, right: Scalar): boolean {
  const [a, b] = [plain(left), plain(right)];
  if (op === "eq") return a === b;
  if (op === "ne") return a !== b;
  if (a === null || b === null) return false;
  switch (op) {
    case "gt":
      return a > b;
    case "ge":
      return a >= b;
    case "lt":
      return a < b;
    case "le":
      return a <= b;
  }
}

/**
 * overall_status as the README's table says (balena's rule): the first rule that matches, in this
 * order. A row inserted without `api_heartbeat_state` or `provisioning_state` has the columns'
 * defaults, "unknown" and null.
 */
export function overallStatus(d: {
  is_active: boolean;
  is_online: boolean;
  last_connectivity_event: Date | null;
  provisioning_progress: number | null;
  download_progress: number | null;
  status: string | null;
  api_heartbeat_state?: string;
  provisioning_state?: string | null;
}): string {
  const heartbeat = d.api_heartbeat_state ?? "unknown";
  if (!d.is_active) return "inactive";
  if (d.provisioning_state === "Post-Provisioning") return "post-provisioning";
  if (!d.is_online && d.last_connectivity_event === null && heartbeat === "unknown") return "configuring";
  if (!d.is_online && (heartbeat === "offline" || heartbeat === "unknown")) return "offline";
  if (d.download_progress !== null && d.status === "Downloading") return "updating";
  if (d.provisioning_progress !== null) return "configuring";
  return "idle";
}

/**
 * v7's overall_status as the README's v7 table says (balena's current rule): the first rule that
 * matches. `vpnControl` is the device's SUPERVISOR_VPN_CONTROL config value, else its fleet's
 * (undefined when neither sets it).
 */
export function overallStatusV7(d: Parameters<typeof overallStatus>[0] & { vpnControl?: string }): string {
  const heartbeat = d.api_heartbeat_state ?? "unknown";
  const heard = heartbeat === "online" || heartbeat === "timeout";
  if (!d.is_active) return "inactive";
  if (d.provisioning_state === "Post-Provisioning") return "post-provisioning";
  if (!d.is_online && d.last_connectivity_event === null && heartbeat === "unknown") return "configuring";
  if (!d.is_online && (heartbeat === "offline" || heartbeat === "unknown")) return "disconnected";
  if (heard && d.download_progress !== null && d.status === "Downloading") return "updating";
  if (d.provisioning_progress !== null) return "configuring";
  if (
    heartbeat === "timeout" ||
    (d.is_online && heartbeat !== "online") ||
    (!d.is_online && heartbeat === "online" && d.vpnControl !== "false")
  )
    return "reduced-functionality";
  return "operational";
}

/**
 * What a `$filter` over `table` answers: the ids it selects, in id order, or `"error"` when the
 * filter fails on a row it is evaluated on (division or modulo by zero): the request's 400.
 */
export function expectedIds(rows: OracleRows, table: "device", filter: Node): number[] | "error" {
  const now = Date.now();
  const ids: number[] = [];
  try {
    for (const row of rows.tables[table]) {
      if (evaluate(filter, { rows, table, row, vars: new Map(), now }) === true) ids.push(row.id as number);
    }
  } catch (error) {
    if (error instanceof DivisionByZero) return "error";
    throw error;
  }
  return ids.sort((a, b) => a - b);
}
