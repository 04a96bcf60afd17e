import { createHash } from "node:crypto";
import type { FastifyReply } from "fastify";
import type { ResultMediaType } from "./negotiation.ts";
import type { OperationParams } from "./operation-params.ts";

// Issue 47 (automatic persisted queries, as Apollo Client's PersistedQueryLink and urql's
// persistedExchange send them) under issue 45's rule for them:
// - a hash is stored only with the query whose SHA-256 it is: the server hashes the text it is
//   given, and a request whose hash differs is refused and stores nothing;
// - the store is bounded: the least recently used query goes first once it holds QUERIES queries
//   or CHARS characters, and a query over MAX_QUERY characters is run but never stored;
// - the store holds texts only, no caller: a query run by its hash runs exactly as if the requester
//   had sent its text, with the requester's credential, whoever registered it.
// Stored texts then reach the server's parse cache and document plans by their text (request-handler.ts).

export const PERSISTED_QUERIES = 1_000;
export const MAX_PERSISTED_QUERY = 128 * 1024;
export const PERSISTED_CHARS = 4 * 1024 * 1024;

/** How a request's `extensions.persistedQuery` turned out. */
export type Persisted =
  /** No persisted query: the request as sent. */
  | { readonly kind: "none" }
  /** The query to run; `byHash` when the request had only the hash. */
  | { readonly kind: "query"; readonly query: string; readonly byHash: boolean }
  | { readonly kind: "notFound" }
  | { readonly kind: "mismatch" }
  | { readonly kind: "unsupported" };

export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

export class PersistedQueries {
  private readonly queries = new Map<string, string>();
  private chars = 0;

  constructor(
    private readonly limits = {
      queries: PERSISTED_QUERIES,
      maxQuery: MAX_PERSISTED_QUERY,
      chars: PERSISTED_CHARS,
    },
  ) {}

  /** The query a request runs, stored as the protocol says (or refused). */
  resolve(params: OperationParams): Persisted {
    const extension = params.extensions?.persistedQuery;
    if (extension === undefined || extension === null) return { kind: "none" };
    const { version, sha256Hash: hash } = extension as { version?: unknown; sha256Hash?: unknown };
    if (version !== 1 || typeof hash !== "string") return { kind: "unsupported" };
    if (params.query === undefined) {
      const query = this.get(hash);
      return query === undefined ? { kind: "notFound" } : { kind: "query", query, byHash: true };
    }
    if (sha256Hex(params.query) !== hash) return { kind: "mismatch" };
    this.set(hash, params.query);
    return { kind: "query", query: params.query, byHash: false };
  }

  /** Whether `hash` is stored (for tests and /metrics). */
  has(hash: string): boolean {
    return this.queries.has(hash);
  }

  get size(): number {
    return this.queries.size;
  }

  private get(hash: string): string | undefined {
    const query = this.queries.get(hash);
    if (query === undefined) return undefined;
    // Most recently used last: the first entry is the one to drop.
    this.queries.delete(hash);
    this.queries.set(hash, query);
    return query;
  }

  private set(hash: string, query: string): void {
    if (query.length > this.limits.maxQuery || this.get(hash) !== undefined) return;
    while (this.queries.size >= this.limits.queries || this.chars + query.length > this.limits.chars) {
      const [oldest, dropped] = this.queries.entries().next().value as [string, string];
      this.queries.delete(oldest);
      this.chars -= dropped.length;
    }
    this.queries.set(hash, query);
    this.chars += query.length;
  }
}

/**
 * A refused persisted query, as Apollo Client and urql recognise it (by message or code; yoga's
 * plugin-apq names them alike). Not found is what a client retries with the text: 200 to
 * `application/json`, 404 to `application/graphql-response+json` (GraphQL over HTTP: no `data`, a
 * 4xx); a wrong hash or extension is the request's mistake, 400.
 */
export function sendPersistedError(
  reply: FastifyReply,
  kind: "notFound" | "mismatch" | "unsupported",
  mediaType: ResultMediaType | undefined,
): FastifyReply {
  const [message, code, status] = {
    notFound: [
      "PersistedQueryNotFound",
      "PERSISTED_QUERY_NOT_FOUND",
      mediaType === "application/json" ? 200 : 404,
    ],
    mismatch: ["PersistedQueryMismatch", "PERSISTED_QUERY_MISMATCH", 400],
    unsupported: ["extensions.persistedQuery must be {version: 1, sha256Hash}", "BAD_USER_INPUT", 400],
  }[kind] as [string, string, number];
  return reply
    .code(status)
    .type(`${mediaType ?? "application/json"}; charset=utf-8`)
    .send(JSON.stringify({ errors: [{ message, extensions: { code, requestId: reply.request.id } }] }));
}
