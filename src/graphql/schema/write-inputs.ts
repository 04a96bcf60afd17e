import type { Field, Resource } from "../../model/types.ts";
import { type Builder, scalarOf } from "./builder.ts";
import { camelCase, type Row } from "./graphql-model.ts";

// Inputs use the GraphQL names; they are turned back into the model's names here and nowhere else.

/** An input member: its GraphQL name and the model field behind it (a foreign key takes `…Id`). */
export type InputMember = readonly [string, Field];

/** The input members of the model fields `names` (a resource's creatable or updatable fields). */
export function inputMembers(resource: Resource, names: readonly string[]): InputMember[] {
  return names.flatMap((name) => {
    const field = resource.fields.get(name) ?? resource.hiddenFields.get(name);
    return field ? [[field.link ? `${camelCase(name)}Id` : camelCase(name), field] as const] : [];
  });
}

/** The input as the write core takes a body: model names, and a DateTime (a Date here) as ISO 8601 text. */
export function toModelNames(members: readonly InputMember[], input: Row): Row {
  const body: Row = {};
  for (const [name, field] of members) {
    const value = input[name];
    if (value !== undefined) body[field.name] = value instanceof Date ? value.toISOString() : value;
  }
  return body;
}

/** An input of writable fields, a foreign key by its id; the required ones non-null. */
export function inputType(
  builder: Builder,
  name: string,
  members: readonly InputMember[],
  required: ReadonlySet<string>,
) {
  return builder.inputRef<Row, false>(name).implement({
    fields: (t) =>
      Object.fromEntries(
        members.map(([member, field]) => [
          member,
          t.field({ type: field.link ? "Int" : scalarOf[field.type], required: required.has(field.name) }),
        ]),
      ) as never,
  });
}
