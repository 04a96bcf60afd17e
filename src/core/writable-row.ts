import { NotFound, Unauthorized } from "../errors.ts";
import { MAY_WRITE } from "./plan.ts";
import { idIn } from "./query.ts";
import { type ReadContext, readRows } from "./read.ts";

/**
 * The actor of a fleet or device the caller may change, read through the planner as a system read
 * (the caller's row predicate, plus whether they may write the row): a row they cannot see is a
 * 404, one they can see but not change a 401 (pinejs's answer to a refused write). Used where a
 * caller acts on that row's behalf: its keys (src/account), its devices' registration
 * (src/devices), its restart (src/proxy).
 */
export async function writableRowActor(
  context: Omit<ReadContext, "format" | "system">,
  table: "application" | "device",
  id: number,
): Promise<number> {
  const [found] = await readRows<{ actor: number; [MAY_WRITE]: boolean }>(
    { resource: table, count: false, options: { filter: idIn([id]), select: ["actor", MAY_WRITE] } },
    { ...context, format: "v4", system: true },
  );
  if (!found) throw new NotFound(`No ${table} with id ${id}`);
  if (!found[MAY_WRITE]) throw new Unauthorized();
  return found.actor;
}
