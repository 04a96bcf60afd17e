import type { Permissions } from "../auth/permissions.ts";
import type { Executor } from "../db/database.ts";
import { type Fragment, ident, param, sql, toStatement } from "../db/sql.ts";
import type { Model } from "../model/types.ts";
import type { CatalogueEntry } from "./schema.ts";

interface Row {
  slug: string;
  name: string;
  state: CatalogueEntry["state"];
  is_private: boolean;
  logo: string | null;
  catalogue: Record<string, unknown>;
  arch: CatalogueEntry["arch"];
  aliases: string[];
}

/**
 * Every entry is built from its `device_type` row: the columns (and its aliases and architecture)
 * win over the stored JSON, so the documents can never disagree with /v6/device_type.
 */
function entryOf(row: Row): CatalogueEntry {
  const { logoUrl: _stored, ...members } = row.catalogue;
  return {
    ...members,
    slug: row.slug,
    aliases: row.aliases,
    name: row.name,
    arch: row.arch,
    state: row.state,
    private: row.is_private,
    ...(row.logo === null ? {} : { logoUrl: row.logo }),
  } as CatalogueEntry;
}

function resource(model: Model, name: string) {
  const found = model.resources.get(name);
  if (!found) throw new Error(`the model has no resource ${name}`);
  return found;
}

/**
 * The entries the caller may read, in the order they were added; with `slug`, only the one it names
 * (by slug or alias). One statement, with the caller's predicate on every table it touches.
 */
export async function readEntries(
  db: Executor,
  model: Model,
  permissions: Permissions,
  slug?: string,
): Promise<CatalogueEntry[]> {
  const [deviceType, alias, arch] = [ident("dt"), ident("a"), ident("ca")];
  const readable = (name: string, row: Fragment) => permissions.readable(resource(model, name), row);
  const named =
    slug === undefined
      ? sql`TRUE`
      : sql`${deviceType}."slug" = ${param(slug, "text")} OR ${deviceType}."id" IN (
          SELECT ${alias}."device_type" FROM "device_type_alias" ${alias}
           WHERE ${alias}."is_referenced_by__alias" = ${param(slug, "text")} AND (${readable("device_type_alias", alias)}))`;
  const rows = await db.query<Row>(
    toStatement(sql`SELECT ${deviceType}."slug", ${deviceType}."name", ${deviceType}."state",
        ${deviceType}."is_private", ${deviceType}."logo", ${deviceType}."catalogue", ${arch}."slug" AS "arch",
        coalesce((SELECT json_agg(${alias}."is_referenced_by__alias" ORDER BY ${alias}."id")
                    FROM "device_type_alias" ${alias}
                   WHERE ${alias}."device_type" = ${deviceType}."id" AND (${readable("device_type_alias", alias)})),
                 '[]'::json) AS "aliases"
      FROM "device_type" ${deviceType}
      JOIN "cpu_architecture" ${arch}
        ON ${arch}."id" = ${deviceType}."is_of__cpu_architecture" AND (${readable("cpu_architecture", arch)})
     WHERE (${readable("device_type", deviceType)}) AND (${named})
     ORDER BY ${deviceType}."id"`),
  );
  return rows.map(entryOf);
}
