import { BadRequest } from "../errors.ts";
import type { Model, Resource } from "../model/types.ts";
import { ETAG } from "./etags.ts";
import { formatInUrl, type NegotiationHeaders } from "./format.ts";
import type { Reply } from "./serialize.ts";

// OData v4 JSON Format §3.1: how much control information a v4 answer carries. `minimal` is what
// the serializers write; `none` leaves out the context, `full` adds each entity's type, id, edit
// link and navigation links. Only the answer's text changes, never the statement.

export type MetadataLevel = "minimal" | "full" | "none";
const levels: readonly string[] = ["minimal", "full", "none"];

/** The level the request asks for: `$format` first, then Accept; `minimal` when neither says. */
export function metadataLevel(headers: NegotiationHeaders, url: string): MetadataLevel {
  const asked =
    formatInUrl(url)?.metadata ?? /;\s*odata\.metadata\s*=\s*([A-Za-z]+)/i.exec(headers.accept ?? "")?.[1];
  if (asked === undefined) return "minimal";
  if (!levels.includes(asked.toLowerCase())) {
    throw new BadRequest(`odata.metadata=${asked} is not supported; use minimal, full or none`);
  }
  return asked.toLowerCase() as MetadataLevel;
}

type Row = Record<string, unknown>;

/** The resource whose entities the context URL says the body holds: `…#device` or `…#device/$entity`. */
function resourceOf(context: string, model: Model): { resource: Resource; single: boolean } | undefined {
  const fragment = /#([^/(]+)(\/\$entity)?$/.exec(context);
  const resource = fragment?.[1] === undefined ? undefined : model.resources.get(fragment[1]);
  return resource && { resource, single: fragment?.[2] !== undefined };
}

function annotate(entity: Row, resource: Resource, model: Model): Row {
  const id = entity.id;
  const link = typeof id === "number" ? `${resource.name}(${id})` : undefined;
  const { [ETAG]: etag, ...properties } = entity;
  const control: Row = { "@odata.type": `#fleetgate.${resource.name}` };
  if (link) Object.assign(control, { "@odata.id": link });
  // JSON Format §4.5: the entity's control information in this order, before its properties.
  if (etag !== undefined) control[ETAG] = etag;
  if (link) control["@odata.editLink"] = link;
  const members: Row = {};
  for (const [name, value] of Object.entries(properties)) {
    const navigation = resource.navigations.get(name);
    const target = navigation && model.resources.get(navigation.target);
    if (target && Array.isArray(value)) {
      members[name] = value.map((item) => annotate(item as Row, target, model));
    } else if (target && value !== null && typeof value === "object") {
      members[name] = annotate(value as Row, target, model);
    } else members[name] = value;
  }
  const navigationLinks: Row = {};
  if (link) {
    for (const name of resource.navigations.keys()) {
      navigationLinks[`${name}@odata.navigationLink`] = `${link}/${name}`;
    }
  }
  return { ...control, ...members, ...navigationLinks };
}

/** A minimal v4 JSON answer at the level the client asked for. */
export function atMetadataLevel(reply: Reply, level: MetadataLevel, model: Model): Reply {
  if (level === "minimal" || !reply.contentType.includes("odata.metadata=minimal")) return reply;
  const body = JSON.parse(reply.body) as Row;
  const context = String(body["@odata.context"] ?? "");
  let shaped: Row;
  if (level === "none") {
    // No control information but the count and the next link (JSON Format §3.1.3); the ETag of an
    // entity read by key stays in its header.
    const { "@odata.context": _context, [ETAG]: _etag, ...rest } = body;
    shaped = Array.isArray(rest.value)
      ? { ...rest, value: (rest.value as Row[]).map(({ [ETAG]: _tag, ...entity }) => entity) }
      : rest;
  } else {
    const found = resourceOf(context, model);
    if (!found) shaped = body;
    else if (found.single) {
      const { "@odata.context": _context, ...entity } = body;
      shaped = { "@odata.context": context, ...annotate(entity, found.resource, model) };
    } else {
      shaped = {
        ...body,
        value: (body.value as Row[]).map((entity) => annotate(entity, found.resource, model)),
      };
    }
  }
  return {
    ...reply,
    contentType: reply.contentType.replace("odata.metadata=minimal", `odata.metadata=${level}`),
    body: JSON.stringify(shaped),
  };
}
