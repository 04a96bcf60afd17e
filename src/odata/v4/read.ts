import type { ODataQuery } from "../../core/query.ts";
import type { ReadResult, ReadShape } from "../../core/read.ts";
import type { Model } from "../../model/types.ts";
import type { V4Negotiation } from "../negotiation.ts";
import type { ResourcePath } from "../path.ts";
import { noContent, type Reply, rawValue } from "../reply.ts";
import type { Versions } from "../versions/index.ts";
import { withEtag } from "./etags.ts";
import { fkPropertiesAsLinks, linksAsFkProperties } from "./fk-properties.ts";
import { withFullMetadata } from "./metadata-level.ts";
import { nextPageUrl, type Page, pageOf, pageOptions, readsOneMore } from "./paging.ts";
import {
  serializeEntity,
  serializeV4,
  serializeV4Count,
  serializeValue,
  V4_HEADERS,
  type V4Control,
} from "./serialize.ts";

// The OData v4 rendering of a read (../read.ts): what the statement writes beyond the rows (fk
// properties, ETags, full metadata's control information, a page's one entity more, an entity by
// key as its object), and the v4 envelope around it.

/** What a v4 reply needs of its read beside the result: kept with a URL shape's statement. */
export interface V4ReadShape {
  readonly kind: ReadShape["kind"];
  /** The resource the URL names, for the answer's OData context. */
  readonly resource: string;
  /** The URL names one entity by its key. */
  readonly single: boolean;
  /** The page of a read whose client set a page size (./paging.ts). */
  readonly page?: Page | undefined;
}

/** A parsed query in the core's names (v6) with all a v4 answer writes, and its page if it has one. */
export function v4Query(
  parsed: ODataQuery,
  negotiation: V4Negotiation,
  names: { readonly model: Model; readonly versions: Versions },
): { query: ODataQuery; page?: Page } {
  const { version, metadataLevel: level } = negotiation;
  const page = !parsed.key && !parsed.count ? pageOf(parsed.options, negotiation.pageSize) : undefined;
  const asked = page ? { ...parsed, options: pageOptions(parsed.options, page) } : parsed;
  const view = names.versions.view(version).model;
  const translated = linksAsFkProperties(
    names.versions.toV6(version, fkPropertiesAsLinks(asked, view)),
    names.model,
  );
  // An entity read by key carries its ETag (with its ETag header); with full metadata every entity.
  const etags = !asked.count && (asked.key !== undefined || level === "full");
  const withEtags = etags ? withEtag(translated) : translated;
  const query = level === "full" ? withFullMetadata(withEtags, asked.resource, view) : withEtags;
  // The statement answers an entity as its object and tells whether another page follows, so
  // either is passed on as it comes.
  if (asked.key !== undefined && !asked.count) return { query: { ...query, answer: { kind: "entity" } } };
  if (page && readsOneMore(page))
    return { query: { ...query, answer: { kind: "page", size: page.size } }, page };
  return page ? { query, page } : { query };
}

/** The answer to a v4 read, from what its statement wrote; `origin` makes `@odata.nextLink` absolute. */
export function v4Reply(
  read: V4ReadShape,
  result: ReadResult,
  negotiation: V4Negotiation,
  request: { readonly url: string; readonly origin?: string | undefined },
): Reply {
  const { json, count, more, etag } = result;
  if (read.kind === "count") return serializeV4Count(count ?? 0);
  const { version } = negotiation;
  const control = { context: `/${version}/$metadata#${read.resource}`, level: negotiation.metadataLevel };
  // A key names one entity (pinejs wire: still an array, {"d":[]} for a miss).
  if (read.single) return serializeEntity({ ...control, context: `${control.context}/$entity` }, json, etag);
  if (!read.page) return serializeV4(control, json, count);
  const nextLink = more
    ? `${request.origin ?? ""}/${version}${nextPageUrl(request.url, read.page)}`
    : undefined;
  const reply = serializeV4(control, json, count, nextLink);
  return {
    ...reply,
    headers: { ...reply.headers, "preference-applied": `odata.maxpagesize=${read.page.size}` },
  };
}

/**
 * The answer to a v4 read of a resource path (../read-path.ts) that reached its end, from the value
 * its statement took out (`extra`: a collection's inline count, a property's entity's id).
 */
export function v4PathReply(
  path: ResourcePath,
  value: string | null,
  extra: string | null,
  negotiation: V4Negotiation,
): Reply {
  const metadata = `/${negotiation.version}/$metadata#`;
  const control = (fragment: string): V4Control => ({
    context: `${metadata}${fragment}`,
    level: negotiation.metadataLevel,
  });
  const set = path.resource.name;
  switch (path.answer) {
    case "count":
      return serializeV4Count(Number(value));
    case "property":
      if (path.end === "$value") return rawValue(value, V4_HEADERS);
      if (value === null || value === "null") return noContent(V4_HEADERS);
      return serializeValue(control(`${set}(${extra})/${path.property}`), value);
    case "collection":
      return serializeV4(
        control(path.end === "$ref" ? "Collection($ref)" : set),
        value ?? "[]",
        extra ?? undefined,
      );
    case "entity":
      return serializeEntity(control(path.end === "$ref" ? "$ref" : `${set}/$entity`), value ?? "null");
  }
}
