import type { Reply } from "../reply.ts";

// pinejs wire: every read is an object with its answer under `d`, and nothing else of OData.

const json = "application/json";

/** Wraps the JSON array text the database produced: {"d":[…]} for collections and for a key (a miss is {"d":[]}). */
export function serializePinejs(rows: string, count: number | string | undefined): Reply {
  const countMember = count === undefined ? "" : `,"@odata.count":${count}`;
  return { contentType: json, body: `{"d":${rows}${countMember}}`, headers: {} };
}

/** `/$count`: {"d":N}. */
export const serializePinejsCount = (count: number): Reply => ({
  contentType: json,
  body: `{"d":${count}}`,
  headers: {},
});
