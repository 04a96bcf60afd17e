import type { Executor } from "../db/database.ts";
import { syncHostFleets } from "./host-fleets.ts";
import type { CatalogueEntry } from "./schema.ts";

/**
 * Writes catalogue entries into `device_type` (columns and the whole entry) and their aliases, and
 * gives each device type its host OS fleet (host-fleets.ts). The
 * documents are built back from these rows (read.ts), so the columns and the documents agree.
 * System write: an operator's import (the CLI, the first start), validated whole by the catalogue's
 * schema; the entry is a hidden column no API writes. Plain SQL, not Prisma's client: the first
 * start of `serve` runs it, and Prisma's query compiler would stay resident in the server after it.
 */
export async function saveEntries(
  tx: Executor,
  entries: readonly CatalogueEntry[],
  { hostFleets = true }: { readonly hostFleets?: boolean } = {},
): Promise<void> {
  for (const entry of entries) {
    await tx.query({
      text: `INSERT INTO "cpu_architecture" ("slug") VALUES ($1::text) ON CONFLICT ("slug") DO NOTHING`,
      values: [entry.arch],
    });
    const [saved] = await tx.query<{ id: number }>({
      text: `INSERT INTO "device_type" ("slug", "name", "is_of__cpu_architecture", "state", "is_private", "logo", "catalogue")
             VALUES ($1::text, $2::text, (SELECT "id" FROM "cpu_architecture" WHERE "slug" = $3::text),
                     $4::text, $5::bool, $6::text, $7::jsonb)
             ON CONFLICT ("slug") DO UPDATE SET "name" = EXCLUDED."name",
               "is_of__cpu_architecture" = EXCLUDED."is_of__cpu_architecture", "state" = EXCLUDED."state",
               "is_private" = EXCLUDED."is_private", "logo" = EXCLUDED."logo", "catalogue" = EXCLUDED."catalogue"
             RETURNING "id"`,
      values: [
        entry.slug,
        entry.name,
        entry.arch,
        entry.state,
        entry.private ?? false,
        entry.logoUrl ?? null,
        JSON.stringify(entry),
      ],
    });
    if (!saved) throw new Error(`device type ${entry.slug} was not saved`);
    await tx.query({
      text: `DELETE FROM "device_type_alias" WHERE "device_type" = $1::int4`,
      values: [saved.id],
    });
    await tx.query({
      text: `INSERT INTO "device_type_alias" ("device_type", "is_referenced_by__alias")
             SELECT $1::int4, unnest($2::text[])`,
      values: [saved.id, [...new Set([entry.slug, ...entry.aliases])]],
    });
  }
  // balena-sdk's getAllSupported finds a device type through its host OS fleet.
  if (hostFleets) {
    await syncHostFleets(
      tx,
      entries.map((entry) => entry.slug),
    );
  }
}
