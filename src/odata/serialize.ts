import type { Format } from "../core/plan-types.ts";

export interface Reply {
  readonly contentType: string;
  readonly body: string;
  /** `OData-Version: 4.0` on an answer in OData v4's format, as the protocol requires; none in pinejs's. */
  readonly headers: Readonly<Record<string, string>>;
}

const json = "application/json";
export const V4_HEADERS = { "odata-version": "4.0" } as const;

/** Wraps the JSON array text the database produced in the envelope of the wire format; nothing is re-parsed. */
export function serializeCollection(
  format: Format,
  context: string,
  rows: string,
  count: number | undefined,
): Reply {
  const countMember = count === undefined ? "" : `,"@odata.count":${count}`;
  if (format === "v4") {
    return {
      contentType: `${json};odata.metadata=minimal`,
      body: `{"@odata.context":${JSON.stringify(context)}${countMember},"value":${rows}}`,
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
