import type { Format } from "../core/plan-types.ts";
import { NotFound } from "../errors.ts";

export interface Reply {
  /** 200 unless said: 204 for a null value of a path (OData v4 Protocol §11.2.6). */
  readonly status?: number;
  readonly contentType: string;
  readonly body: string;
  /** `OData-Version: 4.0` on an answer in OData v4's format, as the protocol requires; none in pinejs's. */
  readonly headers: Readonly<Record<string, string>>;
}

const json = "application/json";
const v4Json = `${json};odata.metadata=minimal`;
export const V4_HEADERS = { "odata-version": "4.0" } as const;

/** Wraps the JSON array text the database produced in the envelope of the wire format; nothing is re-parsed. */
export function serializeCollection(
  format: Format,
  context: string,
  rows: string,
  count: number | undefined,
  nextLink?: string,
): Reply {
  const countMember = count === undefined ? "" : `,"@odata.count":${count}`;
  if (format === "v4") {
    const nextLinkMember = nextLink === undefined ? "" : `,"@odata.nextLink":${JSON.stringify(nextLink)}`;
    return {
      contentType: v4Json,
      body: `{"@odata.context":${JSON.stringify(context)}${countMember}${nextLinkMember},"value":${rows}}`,
      headers: V4_HEADERS,
    };
  }
  // pinejs wire: {"d":[…]} for collections and for a key (a miss is {"d":[]}).
  return { contentType: json, body: `{"d":${rows}${countMember}}`, headers: {} };
}

export function serializeCount(format: Format, count: number): Reply {
  return format === "v4"
    ? { contentType: "text/plain", body: String(count), headers: V4_HEADERS }
    : { contentType: json, body: `{"d":${count}}`, headers: {} };
}

/**
 * OData v4 JSON §10.4: one entity (the JSON object text the database produced, or null), its
 * context first, ending in `/$entity`; a key that matches nothing is 404.
 */
export function serializeEntity(context: string, entity: string): Reply {
  if (entity === "null") throw new NotFound("No entity has this key");
  const members = entity === "{}" ? "}" : `,${entity.slice(1)}`;
  return {
    contentType: v4Json,
    body: `{"@odata.context":${JSON.stringify(`${context}/$entity`)}${members}`,
    headers: V4_HEADERS,
  };
}

/** A v4 JSON body with its context first (JSON Format §4.5.1). */
export function serializeV4(context: string, members: Record<string, unknown>): Reply {
  return {
    contentType: v4Json,
    body: JSON.stringify({ "@odata.context": context, ...members }),
    headers: V4_HEADERS,
  };
}

/** No value: a null property or to-one navigation at the end of a path. */
export const noContent = (headers: Readonly<Record<string, string>>): Reply => ({
  status: 204,
  contentType: "text/plain",
  body: "",
  headers,
});
