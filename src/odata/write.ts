import { resolveResource } from "../core/plan.ts";
import type { ODataQuery } from "../core/query.ts";
import { readRows } from "../core/read.ts";
import {
  createEntity,
  deleteEntities,
  updateEntities,
  type WriteContext,
  type WriteTarget,
} from "../core/write/write.ts";
import { BadRequest } from "../errors.ts";
import { parse } from "./parse/parse.ts";
import type { Versions } from "./versions/index.ts";

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

function targetOf(query: ODataQuery, method: string): WriteTarget {
  const { filter, ...others } = query.options;
  if (query.count) throw new BadRequest(`${method} cannot target /$count`);
  if (Object.keys(others).length > 0) throw new BadRequest(`${method} takes no query options but $filter`);
  if (method === "PUT" && !query.key) throw new BadRequest("PUT needs a key: it replaces one entity");
  return {
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

/** An OData POST, PATCH, PUT or DELETE: parse → translate (to v6) → write core → pinejs reply. */
export async function write(
  request: { method: string; version: string; url: string; body: unknown; dryRun: boolean },
  context: VersionedWriteContext,
): Promise<WriteReply> {
  const asked = parse(request.url);
  const translator = context.versions.translator(request.version);
  const query = translator ? translator.writeTarget(asked) : asked;
  const body = translator
    ? translator.body(
        translator.place(asked.resource),
        request.body,
        request.method === "POST" ? "create" : "update",
      )
    : request.body;
  if (request.method === "POST") {
    if (query.key || query.count || Object.keys(query.options).length > 0) {
      throw new BadRequest("POST goes to a resource collection, without a key or query options");
    }
    const id = await createEntity(query.resource, body, context);
    return {
      table: resolveResource(context.model, query.resource).table,
      status: 201,
      headers: { location: `/${request.version}/${asked.resource}(${id})`, "content-type": json },
      body: await reread(request.version, asked.resource, id, context),
    };
  }
  const target = targetOf(query, request.method);
  const options = { dryRun: request.dryRun };
  const outcome =
    request.method === "DELETE"
      ? await deleteEntities(target, context, options)
      : await updateEntities(target, body, context, {
          ...options,
          replace: request.method === "PUT",
        });
  const headers = { [AFFECTED_ROWS_HEADER]: String(outcome.affected), "content-type": json };
  const table = resolveResource(context.model, query.resource).table;
  if (request.dryRun) {
    const place = translator?.place(asked.resource);
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
      table,
      status: 200,
      headers,
      body: JSON.stringify({ dryRun: true, affected: outcome.affected, changes }),
    };
  }
  // pinejs wire: an empty success body, which v6 turned into the JSON string "OK".
  if (context.versions.view(request.version).writeReply === "empty") {
    const { "content-type": _json, ...rest } = headers;
    return { table, status: 200, headers: rest, body: "" };
  }
  return { table, status: 200, headers, body: JSON.stringify("OK") };
}
