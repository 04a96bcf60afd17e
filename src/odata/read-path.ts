import type { Permissions } from "../auth/permissions.ts";
import { defaultReadLimits, type ReadLimits } from "../core/limits.ts";
import type { JsonPath } from "../core/query.ts";
import { compileQuery, type QueryStatementCache, runRead } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, NotFound } from "../errors.ts";
import type { Model } from "../model/types.ts";
import type { Negotiation } from "./negotiation.ts";
import { pathEnd, type ResourcePath, resourcePath } from "./path.ts";
import { pinejsPathReply } from "./pinejs/read.ts";
import { noContent, type Reply } from "./reply.ts";
import { fkPropertiesAsLinks, linksAsFkProperties } from "./v4/fk-properties.ts";
import { withFullMetadata } from "./v4/metadata-level.ts";
import { v4PathReply } from "./v4/read.ts";
import { V4_HEADERS } from "./v4/serialize.ts";
import type { Versions } from "./versions/index.ts";

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
 * Where the parts of a path's answer sit in the answer of its query (the array of the one entity
 * the path starts from, each navigation expanded in turn): each entity the path goes through, and
 * the value it ends on (with a collection's inline count, a property's entity's id).
 */
function partsOf(path: ResourcePath): { entities: JsonPath[]; value: JsonPath; extra?: JsonPath } {
  const entities: JsonPath[] = [["0"]];
  const ends =
    path.answer === "collection" || path.answer === "count" ? path.steps.length - 1 : path.steps.length;
  for (const step of path.steps.slice(0, ends)) {
    const { name, cardinality } = step.navigation;
    // A navigation to many with a key is an array of at most that one entity.
    entities.push([
      ...(entities[entities.length - 1] as JsonPath),
      name,
      ...(cardinality === "many" ? ["0"] : []),
    ]);
  }
  const last = entities[entities.length - 1] as JsonPath;
  if (path.answer === "property")
    return { entities, value: [...last, path.property as string], extra: [...last, "id"] };
  if (path.answer === "entity") return { entities, value: last };
  const name = (path.steps[path.steps.length - 1] as ResourcePath["steps"][number]).navigation.name;
  return { entities, value: [...last, name], extra: [...last, `${name}@odata.count`] };
}

/**
 * A read of a resource path (./path.ts): its query read like any other, in one statement, which
 * also takes out the value the path names, so the server passes it on unparsed.
 */
export async function readPath(
  url: string,
  negotiation: Negotiation,
  context: PathReadContext,
): Promise<Reply> {
  const end = pathEnd(url);
  // pinejs has no resource paths; a raw value or a count reads the same in either format.
  if (negotiation.protocol === "pinejs" && end !== "$value" && end !== "$count") {
    throw new BadRequest(
      "A navigation in the resource path is served as OData v4 JSON only: send OData-MaxVersion: 4.0",
    );
  }
  const { version } = negotiation;
  const view = context.versions.view(version).model;
  const path = resourcePath(url, view);
  // The path's query is planned as v4 (a to-one expansion is an object, a link its bare id).
  const asked = fkPropertiesAsLinks(path.query, view);
  const translated = linksAsFkProperties(context.versions.toV6(version, asked), context.model);
  // A reference is its id whatever the level.
  const full = negotiation.protocol === "v4" && negotiation.metadataLevel === "full" && path.end !== "$ref";
  const query = full ? withFullMetadata(translated, path.query.resource, view) : translated;
  const parts = partsOf(path);
  const values = parts.extra ? [parts.value, parts.extra] : [parts.value];
  const compiled = compileQuery(
    { ...query, answer: { kind: "at", values, types: parts.entities } },
    {
      model: context.model,
      permissions: context.permissions,
      format: "v4",
      limits: context.limits ?? defaultReadLimits,
      ...(context.statementCaches ? { statementCache: context.statementCaches.queries } : {}),
    },
  );
  const { at } = await runRead(context.db, compiled);
  const [value = null, extra = null] = at?.values ?? [];
  const v4 = negotiation.protocol === "v4";
  if (!found(path, at?.types ?? [])) return noContent(v4 ? V4_HEADERS : {});
  return v4 ? v4PathReply(path, value, extra, negotiation) : pinejsPathReply(path.answer, value);
}

/**
 * Whether the path reaches its end, from the JSON types of the entities it goes through: 404 where
 * one is missing, false (no content) for a null to-one navigation at the end.
 */
function found(path: ResourcePath, types: readonly (string | null)[]): boolean {
  const [root, ...steps] = types;
  if (root === null || root === undefined) throw new NotFound("No entity has this key");
  for (const [i, type] of steps.entries()) {
    const { navigation } = path.steps[i] as ResourcePath["steps"][number];
    const endsHere = i === path.steps.length - 1 && navigation.cardinality === "one";
    if (type === "null" && endsHere) return false;
    if (type === null || type === "null") throw new NotFound(`No ${navigation.target} at this path`);
  }
  return true;
}
