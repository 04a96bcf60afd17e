import type { Format } from "../core/plan-types.ts";

export interface Reply {
  readonly contentType: string;
  readonly body: string;
}

const json = "application/json";

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
    };
  }
  // pinejs wire: {"d":[…]} for collections and for a key (a miss is {"d":[]}).
  return { contentType: json, body: `{"d":${rows}${countMember}}` };
}

export function serializeCount(format: Format, count: number): Reply {
  return format === "v4"
    ? { contentType: "text/plain", body: String(count) }
    : { contentType: json, body: `{"d":${count}}` };
}
