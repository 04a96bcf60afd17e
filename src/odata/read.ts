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
import { type NegotiationHeaders, wantsV4 } from "./format.ts";
import { parse } from "./parse/parse.ts";
import { type Reply, serializeCollection, serializeCount } from "./serialize.ts";
import { literalValue, shapeOf, type UrlShape, withLiterals } from "./shape.ts";
import type { Versions } from "./versions/index.ts";

/** What an OData read keeps of a URL shape beside its statement. */
export interface UrlShapeRead extends ReadShape {
  readonly format: Format;
  /** The resource the URL names, for the answer's OData context. */
  readonly resource: string;
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
  readonly headers: NegotiationHeaders;
}

/** parse → translate (to v6) → plan → limits → compile. */
function compile(request: ReadRequest, context: ReadContext): CompiledRead & UrlShapeRead {
  const asked = parse(request.url);
  const query = context.versions.toV6(request.version, asked);
  const format = wantsV4(request.headers, query.options.format) ? "v4" : "pinejs";
  const read = compileQuery(query, {
    model: context.model,
    permissions: context.permissions,
    format,
    limits: context.limits ?? defaultReadLimits,
    ...(context.statementCaches ? { statementCache: context.statementCaches.queries } : {}),
  });
  return { ...read, format, resource: asked.resource };
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
  const url = statementCaches && permissions.cacheKey !== undefined ? urlSlots(request.url) : undefined;
  if (!statementCaches || !url) return compile(request, context);
  // Everything else a statement depends on: the version, the caller, the negotiated headers.
  const key = `${request.version} ${permissions.cacheKey} ${wantsV4(request.headers, undefined)} ${url.shape.key}`;
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
  const read = compileByShape(request, context);
  const { json, count } = await runRead(context.db, read);
  if (read.kind === "count") return serializeCount(read.format, count ?? 0);
  return serializeCollection(read.format, `/${request.version}/$metadata#${read.resource}`, json, count);
}
