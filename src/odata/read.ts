import type { Permissions } from "../auth/permissions.ts";
import { defaultReadLimits, type ReadLimits } from "../core/limits.ts";
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
import {
  type Negotiation,
  type NegotiationHeaders,
  type NegotiationRequest,
  negotiate,
  negotiationKey,
} from "./negotiation.ts";
import { parse } from "./parse/parse.ts";
import { isResourcePath } from "./path.ts";
import { pinejsQuery, pinejsReply } from "./pinejs/read.ts";
import { readPath } from "./read-path.ts";
import type { Reply } from "./reply.ts";
import { literalValue, shapeOf, type UrlShape, withLiterals } from "./shape.ts";
import { notModified } from "./v4/etags.ts";
import { type V4ReadShape, v4Query, v4Reply } from "./v4/read.ts";
import type { Versions } from "./versions/index.ts";

/**
 * What an OData read keeps of a URL shape beside its statement: what its statement answers, and
 * what the v4 rendering needs besides (its negotiation is in the cache's key).
 */
export interface UrlShapeRead extends ReadShape, V4ReadShape {}

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

/** A GET as the route read it: what negotiation reads, and what the answer needs besides. */
export interface ReadRequest extends NegotiationRequest {
  readonly headers: NegotiationHeaders & { readonly "if-none-match"?: string | undefined };
  /** `http://host:port`, as the client reached the server: `@odata.nextLink` is absolute. */
  readonly origin?: string;
}

/** parse → translate (to v6), with what the negotiated format writes → plan → limits → compile. */
function compile(url: string, negotiation: Negotiation, context: ReadContext): CompiledRead & UrlShapeRead {
  const parsed = parse(url);
  const { query, page } =
    negotiation.protocol === "v4"
      ? v4Query(parsed, negotiation, context)
      : { query: pinejsQuery(parsed, negotiation, context), page: undefined };
  const read = compileQuery(query, {
    model: context.model,
    permissions: context.permissions,
    format: negotiation.protocol,
    limits: context.limits ?? defaultReadLimits,
    ...(context.statementCaches ? { statementCache: context.statementCaches.queries } : {}),
  });
  return { ...read, resource: parsed.resource, single: parsed.key !== undefined, ...(page ? { page } : {}) };
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
function compileByShape(
  url: string,
  negotiation: Negotiation,
  context: ReadContext,
): CompiledRead & UrlShapeRead {
  const { statementCaches, permissions } = context;
  // A read charged to a batch's budget is compiled each time: a cached statement skips the charge.
  const cached = statementCaches && permissions.cacheKey !== undefined && !context.limits?.budget;
  const slots = cached ? urlSlots(url) : undefined;
  if (!statementCaches || !slots) return compile(url, negotiation, context);
  // Everything else a statement depends on: the caller and what the request negotiated.
  const key = `${negotiationKey(negotiation)} ${permissions.cacheKey} ${slots.shape.key}`;
  const { statement, extra } = statementCaches.urls.compile(key, slots.slots, (values) => {
    const { statement, ...extra } = compile(
      values ? withLiterals(slots.shape, values) : url,
      negotiation,
      context,
    );
    return { statement, extra };
  });
  return { ...extra, statement };
}

/**
 * An OData GET: negotiated once, then one statement, rendered in the negotiated format. A URL
 * whose shape (./shape.ts) this caller read before skips straight to binding its literals into the
 * statement of that shape.
 */
export async function read(request: ReadRequest, context: ReadContext): Promise<Reply> {
  const negotiation = negotiate(request);
  return notModified(await readReply(request, negotiation, context), request.headers["if-none-match"]);
}

async function readReply(
  request: ReadRequest,
  negotiation: Negotiation,
  context: ReadContext,
): Promise<Reply> {
  if (isResourcePath(request.url)) return readPath(request.url, negotiation, context);
  const read = compileByShape(request.url, negotiation, context);
  const result = await runRead(context.db, read);
  return negotiation.protocol === "v4"
    ? v4Reply(read, result, negotiation, request)
    : pinejsReply(read, result);
}
