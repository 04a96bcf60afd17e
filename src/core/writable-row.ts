import { Forbidden, NotFound } from "../errors.ts";
import { MAY_WRITE } from "./plan.ts";
import { idIn } from "./query.ts";
import { type ReadContext, readRows } from "./read.ts";

type WritableTable = "application" | "device";

/** The fleet or device does not exist, or the caller cannot see it: the same refusal either way. */
export class RowNotFound extends NotFound {
  constructor(
    readonly table: WritableTable,
    id: number,
  ) {
    super(`No ${table} with id ${id}`);
  }
}

/** The caller sees the fleet or device but may not change it. */
export class RowNotWritable extends Forbidden {
  constructor(
    readonly table: WritableTable,
    id: number,
  ) {
    super(`You may not change ${table} ${id}`);
  }
}

/**
 * The actor of a fleet or device the caller may change, read through the planner as a system read
 * (the caller's row predicate, plus whether they may write the row): a row they cannot see is a
 * `RowNotFound`, one they can see but not change a `RowNotWritable`; each surface answers them its
 * own way (its refusals.ts). Used where a caller acts on that row's behalf: its keys (src/account),
 * its devices' registration (src/devices), its restart (src/proxy).
 */
export async function writableRowActor(
  context: Omit<ReadContext, "format" | "system">,
  table: WritableTable,
  id: number,
): Promise<number> {
  const [found] = await readRows<{ actor: number; [MAY_WRITE]: boolean }>(
    { resource: table, count: false, options: { filter: idIn([id]), select: ["actor", MAY_WRITE] } },
    { ...context, format: "v4", system: true },
  );
  if (!found) throw new RowNotFound(table, id);
  if (!found[MAY_WRITE]) throw new RowNotWritable(table, id);
  return found.actor;
}
