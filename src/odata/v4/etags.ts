import type { ODataQuery } from "../../core/query.ts";
import type { Reply } from "../reply.ts";

// OData v4 Protocol §11.4.1.1 (If-Match on writes), §11.2 with RFC 9110 §13.1.2 (If-None-Match on
// a read): the ETag an entity carries as `@odata.etag` and in the `ETag` header of a read by key.

export const ETAG = "@odata.etag";

/** A v4 read that also reads each row's ETag (core/etag.ts), first among its members. */
export function withEtag(query: ODataQuery): ODataQuery {
  return {
    ...query,
    options: { ...query.options, select: [{ etag: true, as: ETAG }, ...(query.options.select ?? [])] },
  };
}

/** The entity tags of an If-Match or If-None-Match header: `*`, or a list of quoted tags. */
export function entityTags(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  return header.match(/\*|(?:W\/)?"[^"]*"/g) ?? [];
}

const opaque = (tag: string) => tag.replace(/^W\//, "");

/**
 * A read whose entity's ETag the client already holds (If-None-Match) is `304 Not Modified`, with
 * the ETag and no body; RFC 9110 §13.1.2 compares weakly.
 */
export function notModified(reply: Reply, ifNoneMatch: string | undefined): Reply {
  const etag = reply.headers.etag;
  const tags = entityTags(ifNoneMatch);
  if (!etag || !tags?.some((tag) => tag === "*" || opaque(tag) === opaque(etag))) return reply;
  return { status: 304, contentType: reply.contentType, body: "", headers: reply.headers };
}
