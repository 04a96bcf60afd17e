import type { Resource } from "../../model/types.ts";
import { type Builder, type InputRef, type ObjectRefs, scalarOf } from "./builder.ts";
import type { ObjectSpec } from "./graphql-model.ts";

// The arguments more than one field takes, each defined once here. Every call makes fresh
// argument refs for the one field it is spread into.

/** `where`, `orderBy`, `first` and `offset` of a list, at the root and on every to-many relation. */
export function listArguments(builder: Builder, refs: ObjectRefs, spec: ObjectSpec) {
  return builder.args((t) => ({
    where: t.field({ type: refs.wheres.get(spec.name) as InputRef }),
    orderBy: t.field({
      type: [refs.orderBys.get(spec.name) as InputRef],
      required: { list: false, items: true },
    }),
    first: t.int({ description: "At most this many rows (default and maximum: GRAPHQL_MAX_FIRST)" }),
    offset: t.int({ description: "Skip this many rows first" }),
  }));
}

/** The arguments that name one row: each field of each key of the resource, all optional. */
export function keyArguments(builder: Builder, spec: ObjectSpec, resource: Resource) {
  const keyFields = new Set(resource.keys.flat());
  return builder.args((t) =>
    Object.fromEntries(
      [...spec.members]
        .flatMap(([name, member]) =>
          (member.kind === "field" || member.kind === "link") && keyFields.has(member.field.name)
            ? [[name, member.kind === "link" ? "Int" : scalarOf[member.field.type]] as const]
            : [],
        )
        .map(([name, type]) => [name, t.field({ type: type as "Int" })]),
    ),
  );
}

/**
 * `async` and `idempotencyKey` of a supervisor command sent as a mutation: whether it runs as a
 * job, and the key that makes a retry return the job the first call made (as
 * `Prefer: respond-async` and `Idempotency-Key` on POST /supervisor/<path>).
 */
export function deliveryArguments(builder: Builder) {
  return builder.args((t) => ({
    async: t.boolean({
      description: "Answer at once with a job that runs the command (as `Prefer: respond-async`)",
    }),
    idempotencyKey: t.string({
      description: "With `async`: a retry with the same key returns the job the first call made",
    }),
  }));
}
