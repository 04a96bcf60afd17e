import type { Permissions } from "../auth/permissions.ts";
import { defaultReadLimits, type ReadLimits } from "../core/limits.ts";
import type { Format } from "../core/plan-types.ts";
import {
  type CompiledRead,
  compileQuery,
  type QueryStatementCache,
  type ReadShape,
  runRead,
} from "../core/read.ts";
import type { Slot, StatementCache } from "../core/statement-cache.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { notModified, withEtag } from "./etags.ts";
import { fkPropertiesAsLinks, linksAsFkProperties } from "./fk-properties.ts";
import { type NegotiationHeaders, wantsV4 } from "./format.ts";
import { type MetadataLevel, metadataLevel, withFullMetadata } from "./metadata-level.ts";
import { maxPageSize, nextPageUrl, type Page, pageOf, pageOptions, readsOneMore } from "./paging.ts";
import { parse } from "./parse/parse.ts";
import { isResourcePath } from "./path.ts";
import { readPath } from "./read-path.ts";
import { type Reply, serializeCollection, serializeCount, serializeEntity } from "./serialize.ts";
import { literalValue, shapeOf, type UrlShape, withLiterals } from "./shape.ts";
import type { Versions } from "./versions/index.ts";

/** What an OData read keeps of a URL shape beside its statement. */
export interface UrlShapeRead extends ReadShape {
  readonly format: Format;
  /** The resource the URL names, for the answer's OData context. */
  readonly resource: string;
  /** The URL names one entity by its key. */
  readonly single: boolean;
  /** The page of a v4 read whose client set a page size (./paging.ts). */
  readonly page?: Page;
  /** How much control information a v4 answer carries (`minimal` for pinejs's). */
  readonly level: MetadataLevel;
}

/** Compiled reads by URL shape (./shape.ts): a hit skips parsing too. */
export type UrlStatementCache = StatementCache<UrlShapeRead>;

export interface ReadContext {
  readonly db: Executor;
  readonly model: Model;
  readonly versions: Versions;
  readonly permissions: Permissions;
  /** The cost and depth limits; `defaultReadLimits` when left out. */
  readonly limits?: ReadLimits;
  /** Statements by URL shape and by query shape, for callers whose permissions have a `cacheKey`. */
  readonly statementCaches?: { readonly urls: UrlStatementCache; readonly queries: QueryStatementCache };
}

export interface ReadRequest {
  /** The API version from the path: `v1` … `v6`. */
  readonly version: string;
  /** The rest of the URL as received: `/device(5)?$select=id`. */
  readonly url: string;
  readonly headers: NegotiationHeaders & {
    readonly prefer?: string | undefined;
    readonly "if-none-match"?: string | undefined;
  };
  /** `http://host:port`, as the client reached the server: `@odata.nextLink` is absolute. */
  readonly origin?: string;
}

/** parse → translate (to v6) → plan → limits → compile. */
function compile(request: ReadRequest, context: ReadContext): CompiledRead & UrlShapeRead {
  const parsed = parse(request.url);
  const format = wantsV4(request.version, request.headers, parsed.options.format) ? "v4" : "pinejs";
  const page =
    format === "v4" && !parsed.key && !parsed.count
      ? pageOf(parsed.options, maxPageSize(request.headers.prefer))
      : undefined;
  const asked = page ? { ...parsed, options: pageOptions(parsed.options, page) } : parsed;
  const view = context.versions.view(request.version).model;
  const translated =
    format === "v4"
      ? linksAsFkProperties(
          context.versions.toV6(request.version, fkPropertiesAsLinks(asked, view)),
          context.model,
        )
      : context.versions.toV6(request.version, asked);
  const level = format === "v4" ? metadataLevel(request.headers, request.url) : "minimal";
  // An entity read by key carries its ETag (with its ETag header); with full metadata every entity.
  const etags = format === "v4" && !asked.count && (asked.key !== undefined || level === "full");
  const withEtags = etags ? withEtag(translated) : translated;
  const query = level === "full" ? withFullMetadata(withEtags, asked.resource, view) : withEtags;
  // The statement answers a v4 entity as its object and tells whether another page follows, so
  // either is passed on as it comes.
  const answered =
    format === "v4" && asked.key !== undefined && !asked.count
      ? { ...query, answer: { kind: "entity" } as const }
      : page && readsOneMore(page)
        ? { ...query, answer: { kind: "page", size: page.size } as const }
        : query;
  const read = compileQuery(answered, {
    model: context.model,
    permissions: context.permissions,
    format,
    limits: context.limits ?? defaultReadLimits,
    ...(context.statementCaches ? { statementCache: context.statementCaches.queries } : {}),
  });
  return {
    ...read,
    format,
    resource: asked.resource,
    single: asked.key !== undefined,
    level,
    ...(page ? { page } : {}),
  };
}

/** The URL's literals as slots, when it has a shape and every literal decodes. */
function urlSlots(url: string): { shape: UrlShape; slots: Slot[] } | undefined {
  const shape = shapeOf(url);
  if (!shape) return undefined;
  const slots: Slot[] = [];
  for (const literal of shape.literals) {
    const value = literalValue(literal);
    if (value === undefined) return undefined;
    slots.push(typeof value === "number" ? { kind: "integer", value } : { kind: "text", value });
  }
  return { shape, slots };
}

/** The compiled read of a request: by its URL's shape when this caller read that shape before. */
function compileByShape(request: ReadRequest, context: ReadContext): CompiledRead & UrlShapeRead {
  const { statementCaches, permissions } = context;
  // A read charged to a batch's budget is compiled each time: a cached statement skips the charge.
  const cached = statementCaches && permissions.cacheKey !== undefined && !context.limits?.budget;
  const url = cached ? urlSlots(request.url) : undefined;
  if (!statementCaches || !url) return compile(request, context);
  // Everything else a statement depends on: the version, the caller, the negotiated headers.
  const pageSize = maxPageSize(request.headers.prefer) ?? "";
  const v4 = wantsV4(request.version, request.headers, undefined);
  const level = v4 ? metadataLevel(request.headers, request.url) : "";
  const key = `${request.version} ${permissions.cacheKey} ${v4} ${level} ${pageSize} ${url.shape.key}`;
  const { statement, extra } = statementCaches.urls.compile(key, url.slots, (values) => {
    const { statement, ...extra } = compile(
      values ? { ...request, url: withLiterals(url.shape, values) } : request,
      context,
    );
    return { statement, extra };
  });
  return { ...extra, statement };
}

/**
 * An OData GET: one statement, serialized. A URL whose shape (./shape.ts) this caller read before
 * skips straight to binding its literals into the statement of that shape.
 */
export async function read(request: ReadRequest, context: ReadContext): Promise<Reply> {
  return notModified(await readReply(request, context), request.headers["if-none-match"]);
}

async function readReply(request: ReadRequest, context: ReadContext): Promise<Reply> {
  if (isResourcePath(request.url)) return readPath(request, context);
  const read = compileByShape(request, context);
  const { json, count, more, etag } = await runRead(context.db, read);
  if (read.kind === "count") return serializeCount(read.format, count ?? 0);
  const control = { context: `/${request.version}/$metadata#${read.resource}`, level: read.level };
  // OData v4: a key names one entity (pinejs wire: still an array, {"d":[]} for a miss).
  if (read.format === "v4" && read.single) {
    return serializeEntity({ ...control, context: `${control.context}/$entity` }, json, etag);
  }
  if (read.page) {
    const nextLink = more
      ? `${request.origin ?? ""}/${request.version}${nextPageUrl(request.url, read.page)}`
      : undefined;
    const reply = serializeCollection(read.format, control, json, count, nextLink);
    return {
      ...reply,
      headers: { ...reply.headers, "preference-applied": `odata.maxpagesize=${read.page.size}` },
    };
  }
  return serializeCollection(read.format, control, json, count);
}
