import type { DeepCreate, NestedEntity } from "../../core/write/write.ts";
import { BadRequest } from "../../errors.ts";
import type { Model, Resource } from "../../model/types.ts";
import type { VersionTranslator } from "../versions/translate.ts";
import { boundId, v4Body } from "./fk-properties.ts";

// OData v4 Protocol §11.4.2.2: a POST creates an entity with entities of its to-many navigations
// (`"device_tag": [{"tag_key": …}]`) and binds existing ones (`"owns__device@odata.bind":
// ["device(1)", …]`). This splits a v4 body into the entity's own members and the write core's
// DeepCreate, each nested body in v6's names as a body of its own resource would be.

type Row = Record<string, unknown>;

const BIND = "@odata.bind";

export interface SplitBody {
  /** The entity's own members, as a v4 body of the request's version (v4Body turns them into v6). */
  readonly own: unknown;
  readonly deep: DeepCreate;
  /** The navigations it created entities of, to answer with them expanded. */
  readonly expanded: readonly string[];
}

/** A version's names of one resource, and how they read in v6. */
interface Names {
  readonly model: Model;
  readonly translator: VersionTranslator | undefined;
}

function v6Navigation(names: Names, resource: Resource, navigation: string): string {
  const path = names.translator?.place(resource.name).mapping.paths.get(navigation) ?? [navigation];
  if (path.length !== 1) throw new BadRequest(`${navigation} of ${resource.name} cannot be written with it`);
  return path[0] as string;
}

/** A nested entity's body as its own POST's would be: v4 names → the version's → v6's. */
function nestedEntity(names: Names, target: Resource, value: unknown, where: string): NestedEntity {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequest(`${where} holds the entities to create: a list of JSON objects`);
  }
  const split = splitDeepBody(value, target, names);
  const own = v4Body(split.own, target);
  const body = names.translator
    ? names.translator.body(names.translator.place(target.name), own, "create", true)
    : own;
  return { body, deep: split.deep };
}

/** Splits a v4 POST body of `resource` (in its version's names). */
export function splitDeepBody(body: unknown, resource: Resource, names: Names): SplitBody {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { own: body, deep: {}, expanded: [] };
  const own: Row = {};
  const nested: { navigation: string; entities: NestedEntity[] }[] = [];
  const bound: { navigation: string; ids: number[] }[] = [];
  const expanded: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    const link = name.endsWith(BIND) ? name.slice(0, -BIND.length) : undefined;
    const navigation = resource.navigations.get(link ?? name);
    if (link !== undefined && navigation?.cardinality === "many") {
      if (!Array.isArray(value)) {
        throw new BadRequest(`${name} binds a collection: a list of "${navigation.target}(<id>)"`);
      }
      bound.push({
        navigation: v6Navigation(names, resource, link),
        ids: value.map((reference) => boundId(reference, navigation.target, name)),
      });
    } else if (link === undefined && navigation?.cardinality === "many") {
      const target = names.model.resources.get(navigation.target) as Resource;
      if (!Array.isArray(value))
        throw new BadRequest(`${name} is a collection: a list of the ${target.name} to create`);
      nested.push({
        navigation: v6Navigation(names, resource, name),
        entities: value.map((entity) => nestedEntity(names, target, entity, name)),
      });
      expanded.push(name);
    } else if (link === undefined && navigation && typeof value === "object" && value !== null) {
      throw new BadRequest(
        `${name} of ${resource.name} is one entity: a POST creates entities of its collections only; bind an existing ${navigation.target} with "${name}@odata.bind"`,
      );
    } else own[name] = value;
  }
  return {
    own,
    deep: { ...(nested.length > 0 ? { nested } : {}), ...(bound.length > 0 ? { bound } : {}) },
    expanded,
  };
}
