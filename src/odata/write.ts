import { resolveResource } from "../core/plan.ts";
import type { ODataQuery } from "../core/query.ts";
import { readRows } from "../core/read.ts";
import {
  createEntity,
  type DeepCreate,
  deleteEntities,
  updateEntities,
  type WriteContext,
  type WriteOutcome,
  type WriteTarget,
} from "../core/write/write.ts";
import { withinTransaction } from "../db/within-transaction.ts";
import { BadRequest, NotFound } from "../errors.ts";
import { parse } from "./parse/parse.ts";
import { pathEnd } from "./path.ts";
import { read } from "./read.ts";
import { splitDeepBody } from "./v4/deep-insert.ts";
import { entityTags } from "./v4/etags.ts";
import { v4Body } from "./v4/fk-properties.ts";
import { writeRef } from "./v4/ref-write.ts";
import { V4_HEADERS } from "./v4/serialize.ts";
import type { Versions } from "./versions/index.ts";
import type { VersionTranslator } from "./versions/translate.ts";

export interface WriteReply {
  /** The table written, so the caller can react (credentials cached for users and keys). */
  readonly table: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The header that makes a PATCH, PUT or DELETE report what it would change, and change nothing. */
export const DRY_RUN_HEADER = "x-dry-run";
/** How many rows a PATCH, PUT or DELETE changed (or would change, in a dry run). */
export const AFFECTED_ROWS_HEADER = "x-affected-rows";

const json = "application/json";

function targetOf(query: ODataQuery, method: string, ifMatch: string | undefined): WriteTarget {
  const { filter, ...others } = query.options;
  if (query.count) throw new BadRequest(`${method} cannot target /$count`);
  if (Object.keys(others).length > 0) throw new BadRequest(`${method} takes no query options but $filter`);
  if (method === "PUT" && !query.key) throw new BadRequest("PUT needs a key: it replaces one entity");
  const tags = entityTags(ifMatch);
  return {
    ...(tags ? { ifMatch: tags } : {}),
    resource: query.resource,
    ...(query.key ? { key: query.key } : {}),
    ...(filter ? { filter } : {}),
    ...(query.versionFields ? { versionFields: query.versionFields } : {}),
  };
}

/** The created entity as a GET by key shows it (pinejs wire: POST answers with the bare entity). */
async function reread(
  version: string,
  resource: string,
  id: number,
  context: VersionedWriteContext,
): Promise<string> {
  const query = context.versions.toV6(version, {
    resource,
    key: { kind: "id", value: { kind: "number", value: id } },
    count: false,
    options: {},
  });
  const [entity] = await readRows(query, { ...context, format: "pinejs" });
  return JSON.stringify(entity ?? { id });
}

export interface VersionedWriteContext extends WriteContext {
  readonly versions: Versions;
}

export interface WriteRequest {
  readonly method: string;
  readonly version: string;
  readonly url: string;
  readonly body: unknown;
  readonly dryRun: boolean;
  /** The client negotiated OData v4 (negotiation.ts): v4 bodies in, v4 answers out. */
  readonly v4?: boolean;
  /** The `Prefer` header: `return=representation` or `return=minimal` (OData v4 Protocol §8.2.8.7). */
  readonly prefer?: string | undefined;
  /** The `If-Match` header: the write is made only if the entity's ETag still matches (§11.4.1.1). */
  readonly ifMatch?: string | undefined;
  /** The `If-None-Match` header, which no write here honours: refused rather than ignored. */
  readonly ifNoneMatch?: string | undefined;
}

/** The entity a v4 write answers with: what a v4 GET of it answers, with its ETag header. */
async function readV4(
  version: string,
  url: string,
  context: VersionedWriteContext,
): Promise<{ body: string; etag: Record<string, string> }> {
  const reply = await read({ version, url, headers: { "odata-version": "4.0" } }, context);
  return { body: reply.body, etag: reply.headers.etag ? { etag: reply.headers.etag } : {} };
}

/**
 * A PATCH or PUT of one entity and the entity's ETag after it, read in the write's transaction while
 * its row is still locked, so the ETag is the one of this write and no other (OData v4 Protocol
 * §11.4.3: a client's next If-Match sends it back). No ETag when the write leaves the entity out of
 * what the caller may read.
 */
async function changeWithEtag<T>(
  request: WriteRequest,
  context: VersionedWriteContext,
  apply: (context: VersionedWriteContext) => Promise<T>,
): Promise<{ outcome: T; etag: string | undefined }> {
  return context.db.transaction(async (tx) => {
    const within = { ...context, db: withinTransaction(context.db, tx) };
    const outcome = await apply(within);
    const url = `${request.url.split("?")[0] as string}?$select=id`;
    const etag = await read(
      { version: request.version, url, headers: { "odata-version": "4.0" } },
      within,
    ).then(
      (reply) => reply.headers.etag,
      (error: unknown) => {
        if (error instanceof NotFound) return undefined;
        throw error;
      },
    );
    return { outcome, etag };
  });
}

const preferred = (prefer: string | undefined) =>
  /\breturn\s*=\s*(representation|minimal)\b/i.exec(prefer ?? "")?.[1]?.toLowerCase();

/** A write in the core's terms, with what its answer needs of the request as the client wrote it. */
interface TranslatedWrite {
  /** The target in the request's version's names: a created entity's location, a dry run's fields. */
  readonly asked: ODataQuery;
  /** The target in v6. */
  readonly query: ODataQuery;
  readonly translator: VersionTranslator | undefined;
  /** The body in v6's fields, without the entities a v4 deep insert nests in it. */
  readonly body: unknown;
  readonly deep: DeepCreate;
  /** The navigations a v4 deep insert creates entities of, to answer with them expanded. */
  readonly expanded: readonly string[];
  /** What the `Prefer` header asks for: `representation`, `minimal` or nothing. */
  readonly prefer: string | undefined;
}

/** An OData POST, PATCH, PUT or DELETE: parse → translate (to v6) → write core → pinejs or v4 reply. */
export async function write(request: WriteRequest, context: VersionedWriteContext): Promise<WriteReply> {
  if (request.ifNoneMatch !== undefined) throw new BadRequest("If-None-Match is not supported on a write");
  if (pathEnd(request.url) === "$ref") return writeRef(request, context);
  const translated = translateWrite(request, context);
  return request.method === "POST"
    ? create(request, translated, context)
    : change(request, translated, context);
}

/** The request's target and body in v6 (a v4 body's deep insert split off and its names read first). */
function translateWrite(request: WriteRequest, context: VersionedWriteContext): TranslatedWrite {
  const asked = parse(request.url);
  const translator = context.versions.translator(request.version);
  const query = translator ? translator.writeTarget(asked) : asked;
  const model = context.versions.view(request.version).model;
  const resource = model.resources.get(asked.resource);
  if (!resource) throw new NotFound(`Unknown resource '${asked.resource}'`);
  const split =
    request.v4 && request.method === "POST"
      ? splitDeepBody(request.body, resource, { model, translator })
      : { own: request.body, deep: {}, expanded: [] };
  const own = request.v4 ? v4Body(split.own, resource) : split.own;
  const body = translator
    ? translator.body(translator.place(asked.resource), own, request.method === "POST" ? "create" : "update")
    : own;
  const { deep, expanded } = split;
  return { asked, query, translator, body, deep, expanded, prefer: preferred(request.prefer) };
}

/** POST: the created entity as a GET shows it (only its id if a v4 client prefers), at its `Location`. */
async function create(
  request: WriteRequest,
  translated: TranslatedWrite,
  context: VersionedWriteContext,
): Promise<WriteReply> {
  const { asked, query } = translated;
  if (request.ifMatch !== undefined)
    throw new BadRequest("If-Match applies to an existing entity, not to a POST");
  if (query.key || query.count || Object.keys(query.options).length > 0) {
    throw new BadRequest("POST goes to a resource collection, without a key or query options");
  }
  const id = await createEntity(query.resource, translated.body, context, translated.deep);
  const table = resolveResource(context.model, query.resource).table;
  const location = `/${request.version}/${asked.resource}(${id})`;
  if (!request.v4) {
    return {
      table,
      status: 201,
      headers: { location, "content-type": json },
      body: await reread(request.version, asked.resource, id, context),
    };
  }
  // OData v4 Protocol §11.4.2: 201 with the entity, or 204 and its id when the client prefers.
  if (translated.prefer === "minimal") {
    return {
      table,
      status: 204,
      headers: {
        ...V4_HEADERS,
        location,
        "odata-entityid": location,
        "preference-applied": "return=minimal",
      },
      body: "",
    };
  }
  // A deep insert answers with the entities it created expanded (OData v4 Protocol §11.4.2.2).
  const expand = translated.expanded.length > 0 ? `?$expand=${translated.expanded.join(",")}` : "";
  const created = await readV4(request.version, `/${asked.resource}(${id})${expand}`, context);
  return {
    table,
    status: 201,
    headers: { ...V4_HEADERS, ...created.etag, location, "content-type": `${json};odata.metadata=minimal` },
    body: created.body,
  };
}

/** What a PATCH, PUT or DELETE changed, and the entity's ETag after it when a v4 answer carries one. */
interface Changed {
  readonly outcome: WriteOutcome;
  readonly etag: string | undefined;
}

/** The answer to a write, without the table its caller is told of. */
type Answer = Omit<WriteReply, "table">;

/** PATCH, PUT or DELETE: how many rows changed, answered as a dry run, on v4 or on the pinejs wire. */
async function change(
  request: WriteRequest,
  translated: TranslatedWrite,
  context: VersionedWriteContext,
): Promise<WriteReply> {
  const { query } = translated;
  const target = targetOf(query, request.method, request.ifMatch);
  const options = { dryRun: request.dryRun };
  const apply = (within: VersionedWriteContext) =>
    request.method === "DELETE"
      ? deleteEntities(target, within, options)
      : updateEntities(target, translated.body, within, { ...options, replace: request.method === "PUT" });
  // With return=representation the entity read after the write carries its ETag already.
  const etagged =
    request.v4 &&
    query.key !== undefined &&
    request.method !== "DELETE" &&
    !request.dryRun &&
    translated.prefer !== "representation";
  const changed: Changed = etagged
    ? await changeWithEtag(request, context, apply)
    : { outcome: await apply(context), etag: undefined };
  const table = resolveResource(context.model, query.resource).table;
  const answer = request.dryRun
    ? dryRunAnswer(translated, changed.outcome)
    : request.v4
      ? await changedV4(request, translated, changed, context)
      : changedPinejs(request.version, changed.outcome, context);
  return { table, ...answer };
}

const changeHeaders = (outcome: WriteOutcome) => ({
  [AFFECTED_ROWS_HEADER]: String(outcome.affected),
  "content-type": json,
});

/** Each row before and after, in the request's version's fields. */
function dryRunAnswer(translated: TranslatedWrite, outcome: WriteOutcome): Answer {
  const { translator } = translated;
  const place = translator?.place(translated.asked.resource);
  const changes = (outcome.changes ?? []).map((change) =>
    translator && place
      ? {
          id: change.id,
          before: translator.entity(place, change.before),
          after: translator.entity(place, change.after),
        }
      : change,
  );
  return {
    status: 200,
    headers: changeHeaders(outcome),
    body: JSON.stringify({ dryRun: true, affected: outcome.affected, changes }),
  };
}

/** OData v4 Protocol §11.4.3–11.4.5: 204, or the entity as it is now when the client prefers it. */
async function changedV4(
  request: WriteRequest,
  translated: TranslatedWrite,
  { outcome, etag }: Changed,
  context: VersionedWriteContext,
): Promise<Answer> {
  const headers = changeHeaders(outcome);
  if (translated.prefer === "representation" && translated.query.key && request.method !== "DELETE") {
    const written = await readV4(request.version, request.url.split("?")[0] as string, context);
    return {
      status: 200,
      headers: {
        ...headers,
        ...V4_HEADERS,
        ...written.etag,
        "content-type": `${json};odata.metadata=minimal`,
        "preference-applied": "return=representation",
      },
      body: written.body,
    };
  }
  const { "content-type": _json, ...rest } = headers;
  return { status: 204, headers: { ...rest, ...V4_HEADERS, ...(etag ? { etag } : {}) }, body: "" };
}

/** pinejs wire: an empty success body, which v6 turned into the JSON string "OK". */
function changedPinejs(version: string, outcome: WriteOutcome, context: VersionedWriteContext): Answer {
  const headers = changeHeaders(outcome);
  if (context.versions.view(version).writeReply === "empty") {
    const { "content-type": _json, ...rest } = headers;
    return { status: 200, headers: rest, body: "" };
  }
  return { status: 200, headers, body: JSON.stringify("OK") };
}
