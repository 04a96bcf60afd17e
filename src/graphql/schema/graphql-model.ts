import type { Field, Model, Navigation, Resource } from "../../model/types.ts";

// OData names (snake_case, `__` between verb and noun) as GraphQL names: `belongs_to__application`
// is `belongsToApplication`, the resource `device_type` is the type `DeviceType`.

export function camelCase(name: string): string {
  return name.replace(/_+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** English plurals, enough for resource names: `device` → `devices`, `device_type_alias` → `…Aliases`. */
export function plural(name: string): string {
  if (/(s|x|ch|sh)$/.test(name)) return `${name}es`;
  if (/[^aeiou]y$/.test(name)) return `${name.slice(0, -1)}ies`;
  return `${name}s`;
}

/** A row as the core reads it: field names as GraphQL names them. */
export type Row = Record<string, unknown>;

/** What one field of a GraphQL object type reads, in the OData model's terms. */
export type Member =
  | { readonly kind: "field"; readonly field: Field }
  /** A foreign key's bare id: `belongsToApplicationId`. */
  | { readonly kind: "link"; readonly field: Field }
  | { readonly kind: "toOne"; readonly navigation: Navigation; readonly target: string }
  | { readonly kind: "toMany"; readonly navigation: Navigation; readonly target: string }
  /** The `…Count` twin of a to-many relation. */
  | { readonly kind: "count"; readonly navigation: Navigation; readonly target: string };

/** One GraphQL object type: a table, shown through the resource of the same name. */
export interface ObjectSpec {
  readonly name: string;
  readonly resource: Resource;
  readonly members: ReadonlyMap<string, Member>;
}

/**
 * The GraphQL view of the registry: one object type per table (an alias resource such as
 * `my_application` shares its table's type), members in camelCase. Built once; the schema, the
 * selection planner and the `where` translator all read it, so they cannot disagree.
 */
export class GraphQLModel {
  readonly objects = new Map<string, ObjectSpec>();

  constructor(readonly model: Model) {
    for (const resource of model.resources.values()) {
      if (resource.name !== resource.table) continue;
      this.objects.set(resource.table, {
        name: pascalCase(resource.table),
        resource,
        members: members(resource),
      });
    }
  }

  /** The object type of a resource (an alias resource answers with its table's type). */
  objectOf(resourceName: string): ObjectSpec {
    const resource = this.model.resources.get(resourceName);
    const spec = resource && this.objects.get(resource.table);
    if (!spec) throw new Error(`No GraphQL type for resource '${resourceName}'`);
    return spec;
  }
}

function members(resource: Resource): Map<string, Member> {
  const result = new Map<string, Member>();
  const add = (name: string, member: Member) => {
    if (result.has(name)) throw new Error(`Two members of ${resource.name} are named '${name}' in GraphQL`);
    result.set(name, member);
  };
  for (const field of resource.fields.values()) {
    // A link to an internal table (an API key's actor) has no relation beside it: a plain Int field.
    if (field.link && resource.navigations.has(field.name))
      add(`${camelCase(field.name)}Id`, { kind: "link", field });
    else add(camelCase(field.name), { kind: "field", field });
  }
  for (const navigation of resource.navigations.values()) {
    const target = navigation.target;
    const name = camelCase(navigation.name);
    if (navigation.cardinality === "one") add(name, { kind: "toOne", navigation, target });
    else {
      add(name, { kind: "toMany", navigation, target });
      add(`${name}Count`, { kind: "count", navigation, target });
    }
  }
  return result;
}
