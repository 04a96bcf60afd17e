import type { Permissions } from "../auth/permissions.ts";
import { defaultReadLimits, type ReadLimits } from "../core/limits.ts";
import { compileQuery, type QueryStatementCache, runRead } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, NotFound } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { fkPropertiesAsLinks, linksAsFkProperties } from "./fk-properties.ts";
import { formatInUrl, type NegotiationHeaders, wantsV4 } from "./format.ts";
import { pathEnd, type ResourcePath, resourcePath } from "./path.ts";
import { noContent, type Reply, serializeCount, serializeV4, V4_HEADERS } from "./serialize.ts";
import type { Versions } from "./versions/index.ts";

type Row = Record<string, unknown>;

/** What read.ts's ReadContext holds that a path read uses. */
export interface PathReadContext {
  readonly db: Executor;
  readonly model: Model;
  readonly versions: Versions;
  readonly permissions: Permissions;
  readonly limits?: ReadLimits;
  readonly statementCaches?: { readonly queries: QueryStatementCache };
}

/**
 * A read of a resource path (./path.ts): its query read like any other, in one statement, then the
 * value the path names taken out of the answer.
 */
export async function readPath(
  request: { readonly version: string; readonly url: string; readonly headers: NegotiationHeaders },
  context: PathReadContext,
): Promise<Reply> {
  const v4 = wantsV4(request.headers, formatInUrl(request.url));
  const end = pathEnd(request.url);
  // pinejs has no resource paths; a raw value or a count reads the same in either format.
  if (!v4 && end !== "$value" && end !== "$count") {
    throw new BadRequest(
      "A navigation in the resource path is served as OData v4 JSON only: send OData-MaxVersion: 4.0",
    );
  }
  const view = context.versions.view(request.version).model;
  const path = resourcePath(request.url, view);
  // The path's query is planned as v4 (a to-one expansion is an object, a link its bare id).
  const asked = fkPropertiesAsLinks(path.query, view);
  const query = linksAsFkProperties(context.versions.toV6(request.version, asked), context.model);
  const compiled = compileQuery(query, {
    model: context.model,
    permissions: context.permissions,
    format: "v4",
    limits: context.limits ?? defaultReadLimits,
    ...(context.statementCaches ? { statementCache: context.statementCaches.queries } : {}),
  });
  const [root] = JSON.parse((await runRead(context.db, compiled)).json) as Row[];
  if (!root) throw new NotFound("No entity has this key");
  return answer(path, walk(path, root), `/${request.version}/$metadata`, v4);
}

/** What the path names in its query's answer: an entity (or null), a collection, or a count. */
function walk(path: ResourcePath, root: Row): { value: unknown; count?: unknown } {
  let value: unknown = root;
  for (const [i, step] of path.steps.entries()) {
    const parent = value as Row;
    const name = step.navigation.name;
    const last = i === path.steps.length - 1;
    if (last && (path.answer === "count" || path.answer === "collection")) {
      return { value: parent[name], count: parent[`${name}@odata.count`] };
    }
    const next = parent[name];
    value = Array.isArray(next) ? next[0] : next;
    if (value === undefined || (value === null && !(last && step.navigation.cardinality === "one"))) {
      throw new NotFound(`No ${step.navigation.target} at this path`);
    }
    if (value === null) return { value };
  }
  return { value };
}

function answer(
  path: ResourcePath,
  found: { value: unknown; count?: unknown },
  metadata: string,
  v4: boolean,
): Reply {
  const headers = v4 ? V4_HEADERS : {};
  const { value } = found;
  const set = path.resource.name;
  if (path.answer === "count") return serializeCount(v4 ? "v4" : "pinejs", Number(value));
  if (value === null) return noContent(headers);
  if (path.answer === "property") {
    const entity = value as Row;
    const property = entity[path.property as string];
    if (property === null || property === undefined) return noContent(headers);
    if (path.end === "$value") {
      const text = typeof property === "string" ? property : JSON.stringify(property);
      return { contentType: "text/plain;charset=utf-8", body: text, headers };
    }
    return serializeV4(`${metadata}#${set}(${String(entity.id)})/${path.property}`, { value: property });
  }
  const ref = (entity: Row) => ({ "@odata.id": `${set}(${String(entity.id)})` });
  if (path.answer === "collection") {
    const rows = value as Row[];
    const count = found.count === undefined ? {} : { "@odata.count": found.count };
    return path.end === "$ref"
      ? serializeV4(`${metadata}#Collection($ref)`, { ...count, value: rows.map(ref) })
      : serializeV4(`${metadata}#${set}`, { ...count, value: rows });
  }
  const entity = value as Row;
  return path.end === "$ref"
    ? serializeV4(`${metadata}#$ref`, ref(entity))
    : serializeV4(`${metadata}#${set}/$entity`, entity);
}
