import { resolveResource } from "../../core/plan.ts";
import type { Expr, Key, ODataQuery } from "../../core/query.ts";
import { readRows } from "../../core/read.ts";
import { updateEntities, type WriteContext, type WriteTarget } from "../../core/write/write.ts";
import { BadRequest, NotFound } from "../../errors.ts";
import type { Field, Navigation, Resource } from "../../model/types.ts";
import { resourcePath } from "../path.ts";
import type { Versions } from "../versions/index.ts";
import { V4_HEADERS } from "./serialize.ts";

// OData v4 Protocol §11.4.6: a write to a navigation's `$ref` changes which entity it points to.
// Every such change is a PATCH of the row that holds the foreign key, through the write core, so
// the caller's write predicates, the resource's rules and the transaction are those of any PATCH:
// `device(1)/belongs_to__application/$ref` writes the device's link; `application(2)/owns__device/$ref`
// writes the link of the device it names.

/** The `$id` of a DELETE from a collection (`…/owns__device/$ref?$id=device(1)`), and the rest of the query. */
function takeId(url: string): { url: string; id?: string } {
  const mark = url.indexOf("?");
  if (mark < 0) return { url };
  const kept: string[] = [];
  let id: string | undefined;
  for (const part of url.slice(mark + 1).split("&")) {
    if (part.startsWith("$id=")) id = decodeURIComponent(part.slice(4));
    else if (part !== "") kept.push(part);
  }
  const path = url.slice(0, mark);
  return { url: kept.length > 0 ? `${path}?${kept.join("&")}` : path, ...(id === undefined ? {} : { id }) };
}

/**
 * The id an entity reference names: `device(1)`, `/v6/device(1)` or `http://host/v6/device(1)`
 * (OData v4 JSON §8.5: relative to the service root, or absolute).
 */
function referencedId(reference: unknown, target: string, version: string, what: string): number {
  const text = typeof reference === "string" ? reference : "";
  const root = text.indexOf(`/${version}/`);
  const relative = root >= 0 ? text.slice(root + version.length + 2) : text;
  const entity = /^([^/()?]+)\((\d+)\)$/.exec(relative);
  if (!entity || entity[1] !== target) {
    throw new BadRequest(`${what} must name one ${target} by its id: "${target}(<id>)"`);
  }
  return Number(entity[2]);
}

/** The body's `@odata.id`, the only member an entity reference has. */
function bodyReference(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body) || !("@odata.id" in body)) {
    throw new BadRequest(
      'The body of a write to $ref is an entity reference: {"@odata.id": "<entity>(<id>)"}',
    );
  }
  return (body as Record<string, unknown>)["@odata.id"];
}

const idKey = (id: number): Key => ({ kind: "id", value: { kind: "number", value: id } });

const equals = (segments: string[], value: number): Expr => ({
  kind: "comparison",
  op: "eq",
  left: { kind: "path", segments },
  right: { kind: "number", value },
});

/** The link field a navigation writes: the fk on the row it starts from (to-one) or on its target (to-many). */
function linkField(resource: Resource, navigation: Navigation, target: Resource) {
  const [holder, column] =
    navigation.cardinality === "one" ? [resource, navigation.localColumn] : [target, navigation.remoteColumn];
  const field = holder.fields.get(column);
  if (navigation.through || !field?.link) {
    throw new BadRequest(
      `${navigation.name} of ${resource.name} is not a link this API writes through $ref${
        navigation.through ? `: create or delete a ${navigation.through.resource} instead` : ""
      }`,
    );
  }
  return field;
}

/** A write to one navigation's $ref: what was asked (in the version's names) and what it writes (v6). */
interface Ref {
  readonly method: string;
  readonly body: unknown;
  readonly version: string;
  readonly asked: { readonly resource: string; readonly navigation: string; readonly target: string };
  readonly root: ODataQuery & { readonly key: Key };
  readonly rootResource: Resource;
  readonly target: Resource;
  readonly field: Field;
  /** `…/owns__device(1)/$ref` */
  readonly childKey?: Key;
  /** `…/owns__device/$ref?$id=device(1)` */
  readonly deletedId?: string;
}

interface Change {
  readonly target: WriteTarget;
  readonly body: Record<string, unknown>;
}

const referenceOf = (ref: Ref) =>
  referencedId(
    bodyReference(ref.body),
    ref.asked.target,
    ref.version,
    `@odata.id of ${ref.asked.navigation}/$ref`,
  );

/** PUT sets the link the entity holds, DELETE unsets it. */
function toOneChange(ref: Ref): Change {
  const { method, field, asked } = ref;
  if (method !== "PUT" && method !== "DELETE") {
    throw new BadRequest(`${asked.navigation} is one entity: PUT its $ref to set it, DELETE it to unset it`);
  }
  if (method === "DELETE" && !field.nullable) {
    throw new BadRequest(`'${field.name}' of ${ref.rootResource.name} cannot be null: replace it with PUT`);
  }
  const value = method === "PUT" ? referenceOf(ref) : null;
  return { target: { resource: ref.root.resource, key: ref.root.key }, body: { [field.name]: value } };
}

/** POST links an entity to the collection's owner; DELETE unlinks one that is in the collection. */
async function collectionChange(ref: Ref, context: WriteContext): Promise<Change> {
  const { method, field, asked, target } = ref;
  if (method !== "POST" && method !== "DELETE") {
    throw new BadRequest(
      `${asked.navigation} is a collection: POST a $ref to add to it, DELETE one to remove it`,
    );
  }
  // The entity the collection belongs to must be one the caller can read: else it is not there.
  const [owner] = await readRows(
    { ...ref.root, options: { select: ["id"] } },
    { ...context, format: "pinejs" },
  );
  if (!owner) throw new NotFound(`No ${asked.resource} has this key`);
  const ownerId = owner.id as number;
  if (method === "POST") {
    if (ref.childKey) throw new BadRequest(`POST adds to ${asked.navigation}/$ref itself, without a key`);
    return {
      target: { resource: target.name, key: idKey(referenceOf(ref)) },
      body: { [field.name]: ownerId },
    };
  }
  if (!field.nullable) {
    throw new BadRequest(
      `'${field.name}' of ${target.name} cannot be null: a ${target.name} leaves ${asked.navigation} only by moving to another ${ref.rootResource.name}`,
    );
  }
  const { childKey, deletedId } = ref;
  const named = childKey
    ? childKey.kind === "id" && childKey.value.kind === "number"
      ? childKey.value.value
      : undefined
    : deletedId === undefined
      ? undefined
      : referencedId(deletedId, asked.target, ref.version, "$id");
  if (named === undefined) {
    throw new BadRequest(
      `DELETE of ${asked.navigation}/$ref names the ${asked.target} to remove: ${asked.navigation}(<id>)/$ref or $id=${asked.target}(<id>)`,
    );
  }
  // Only a member of this collection leaves it.
  return {
    target: { resource: target.name, key: idKey(named), filter: equals([field.name], ownerId) },
    body: { [field.name]: null },
  };
}

/** What of write.ts's request a write to $ref reads. */
interface RefWriteRequest {
  readonly method: string;
  readonly version: string;
  readonly url: string;
  readonly body: unknown;
  readonly dryRun: boolean;
  readonly v4?: boolean;
  readonly ifMatch?: string | undefined;
}

/** PUT, POST or DELETE of `<entity>/<navigation>/$ref`: one PATCH of the row holding the link. */
export async function writeRef(
  request: RefWriteRequest,
  context: WriteContext & { readonly versions: Versions },
): Promise<{ table: string; status: number; headers: Record<string, string>; body: string }> {
  const { version, method } = request;
  if (request.dryRun) throw new BadRequest("A write to $ref has no dry run");
  // An ETag is an entity's; a reference has none to compare, and a condition is never dropped.
  if (request.ifMatch !== undefined) throw new BadRequest("If-Match applies to an entity, not to a $ref");
  const { url, id: deletedId } = takeId(request.url);
  const path = resourcePath(url, context.versions.view(version).model);
  const [step, ...deeper] = path.steps;
  if (!step || deeper.length > 0) {
    throw new BadRequest(
      "A write to $ref follows one navigation from an entity: <entity>(<key>)/<navigation>/$ref",
    );
  }
  if (url.includes("?")) throw new BadRequest("A write to $ref takes no query options but $id");
  // The path in v6's names: the core's.
  const translator = context.versions.translator(version);
  const asked: ODataQuery = {
    resource: path.query.resource,
    key: path.query.key as Key,
    count: false,
    options: {},
  };
  const root = translator ? translator.writeTarget(asked) : asked;
  const rootResource = resolveResource(context.model, root.resource);
  const v6Name = translator?.place(asked.resource).mapping.paths.get(step.navigation.name) ?? [
    step.navigation.name,
  ];
  const navigation = v6Name.length === 1 ? rootResource.navigations.get(v6Name[0] as string) : undefined;
  if (!navigation)
    throw new BadRequest(`${step.navigation.name} of ${asked.resource} cannot be written through $ref`);
  const target = resolveResource(context.model, navigation.target);
  const field = linkField(rootResource, navigation, target);
  const ref: Ref = {
    method,
    body: request.body,
    version,
    asked: { resource: asked.resource, navigation: step.navigation.name, target: step.navigation.target },
    root: { ...root, key: root.key as Key },
    rootResource,
    target,
    field,
    ...(step.key ? { childKey: step.key } : {}),
    ...(deletedId === undefined ? {} : { deletedId }),
  };
  const write = navigation.cardinality === "one" ? toOneChange(ref) : await collectionChange(ref, context);
  const outcome = await updateEntities(write.target, write.body, context);
  if (outcome.affected === 0) {
    throw new NotFound(
      navigation.cardinality === "one"
        ? `No ${asked.resource} has this key`
        : `No ${step.navigation.target} with this id in ${step.navigation.name}`,
    );
  }
  return {
    table: resolveResource(context.model, write.target.resource).table,
    status: 204,
    headers: request.v4 ? { ...V4_HEADERS } : {},
    body: "",
  };
}
