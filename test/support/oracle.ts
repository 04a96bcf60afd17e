// The OData semantics the read tests expect, written in JavaScript: expectations are computed with
// these from the rows a test inserted, never by asking the compiler or SQL.

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

/** overall_status as documented (src/odata/sql/computed.ts), first match wins. */
export function overallStatus(d: {
  is_active: boolean;
  is_online: boolean;
  last_connectivity_event: Date | null;
  provisioning_progress: number | null;
  download_progress: number | null;
  status: string | null;
}): string {
  if (!d.is_active) return "inactive";
  if (!d.is_online && d.last_connectivity_event === null) return "configuring";
  if (!d.is_online) return "offline";
  if (d.provisioning_progress !== null) return "configuring";
  if (d.download_progress !== null || d.status === "Downloading" || d.status === "Installing")
    return "updating";
  return "idle";
}
