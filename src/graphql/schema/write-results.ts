import type { Change, WriteOutcome } from "../../core/write/write.ts";
import type { Builder } from "./builder.ts";
import type { ObjectSpec, Row } from "./graphql-model.ts";

// What a bulk write answers: how many rows it changed and, in a dry run, each row before and after.

/** The `WriteResult` type (and the `WriteChange` type of its rows). */
export function writeResultType(builder: Builder) {
  const change = builder.objectRef<Row>("WriteChange").implement({
    description: "One row of a dry run: the fields a write changes, before and after",
    fields: (t) => ({
      id: t.int({ resolve: (row) => row.id as number }),
      before: t.field({ type: "JSON", nullable: true, resolve: (row) => row.before }),
      after: t.field({ type: "JSON", nullable: true, resolve: (row) => row.after }),
    }),
  });
  return builder.objectRef<Row>("WriteResult").implement({
    description: "What a bulk write changed (or, in a dry run, would change)",
    fields: (t) => ({
      affected: t.int({ resolve: (row) => row.affected as number }),
      dryRun: t.boolean({ resolve: (row) => row.dryRun as boolean }),
      changes: t.field({
        type: [change],
        nullable: true,
        description: "Each row before and after; dry runs only",
        resolve: (row) => row.changes as Row[] | null,
      }),
    }),
  });
}

/** A bulk write's outcome as a `WriteResult`. */
export function writeResult(spec: ObjectSpec, written: WriteOutcome, dryRun: boolean): Row {
  return { affected: written.affected, dryRun, changes: changesInGraphQLNames(spec, written.changes) };
}

/** A dry run's rows in GraphQL names: `belongs_to__application: {__id: 5}` is `belongsToApplicationId: 5`. */
function changesInGraphQLNames(spec: ObjectSpec, changes: readonly Change[] | undefined) {
  if (!changes) return null;
  const names = new Map<string, string>();
  for (const [name, member] of spec.members) {
    if (member.kind === "field" || member.kind === "link") names.set(member.field.name, name);
  }
  const rename = (row: Row | null) =>
    row &&
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        names.get(key) ?? key,
        value !== null && typeof value === "object" && "__id" in value ? value.__id : value,
      ]),
    );
  return changes.map((change) => ({
    id: change.id,
    before: rename(change.before),
    after: rename(change.after),
  }));
}
