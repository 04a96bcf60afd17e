import { NotFound } from "../../errors.ts";
import type { MetadataLevel } from "../negotiation.ts";
import type { Reply } from "../reply.ts";

const json = "application/json";
export const V4_HEADERS = { "odata-version": "4.0" } as const;

/** What a v4 answer says of itself: its context URL, which `odata.metadata=none` leaves out. */
export interface V4Control {
  readonly context: string;
  readonly level: MetadataLevel;
}

/** A v4 body: its context (unless the level is `none`), then `members`, each written as JSON text. */
function v4Reply(control: V4Control, members: readonly string[]): Reply {
  const context = control.level === "none" ? [] : [`"@odata.context":${JSON.stringify(control.context)}`];
  return {
    contentType: `${json};odata.metadata=${control.level}`,
    body: `{${[...context, ...members].join(",")}}`,
    headers: V4_HEADERS,
  };
}

/** OData v4 JSON §12: the JSON array text the database produced under `value`; nothing is re-parsed. */
export function serializeV4(
  control: V4Control,
  rows: string,
  count: number | string | undefined,
  nextLink?: string,
): Reply {
  const countMember = count === undefined ? [] : [`"@odata.count":${count}`];
  const nextLinkMember = nextLink === undefined ? [] : [`"@odata.nextLink":${JSON.stringify(nextLink)}`];
  return v4Reply(control, [...countMember, ...nextLinkMember, `"value":${rows}`]);
}

/** OData v4 Protocol §11.2.9: `/$count` is the number as plain text. */
export const serializeV4Count = (count: number): Reply => ({
  contentType: "text/plain",
  body: String(count),
  headers: V4_HEADERS,
});

/** OData v4 JSON §10.14: a property's value (JSON text), under `value`. */
export const serializeValue = (control: V4Control, value: string): Reply =>
  v4Reply(control, [`"value":${value}`]);

/**
 * OData v4 JSON §10.4: one entity (the JSON object text the database produced, or null) after its
 * context; a key that matches nothing is 404. Its ETag, when read, is the entity's first member
 * (./etags.ts `withEtag`) and goes in the header too; `odata.metadata=none` keeps only the header.
 */
export function serializeEntity(control: V4Control, entity: string, etag?: string): Reply {
  if (entity === "null") throw new NotFound("No entity has this key");
  const etagMember = etag === undefined ? undefined : `{"@odata.etag":${JSON.stringify(etag)}`;
  // The entity's members as text, after its `{` (at `none`, after its ETag member too).
  const rest =
    control.level === "none" && etagMember !== undefined && entity.startsWith(etagMember)
      ? entity.slice(etagMember.length).replace(/^,/, "")
      : entity.slice(1);
  const members = rest === "}" ? [] : [rest.slice(0, -1)];
  const reply = v4Reply(control, members);
  return etag === undefined ? reply : { ...reply, headers: { ...reply.headers, etag } };
}
