import type { Database } from "../db/database.ts";
import { Conflict } from "../errors.ts";
import { parseCatalogueFile } from "./parse-file.ts";
import { saveEntries } from "./store.ts";

/**
 * Loads a catalogue file in one transaction: entries are created or replaced by slug, device types
 * the file does not name stay as they are. An invalid file, or an alias another device type holds,
 * changes nothing. System write: an operator's import (the CLI), validated whole by the catalogue's
 * schema (store.ts).
 */
export async function importCatalogue(db: Database, json: unknown): Promise<{ deviceTypes: number }> {
  const { entries, pathOf } = parseCatalogueFile(json);
  await db.transaction(async (tx) => {
    // The file's own device types give up their aliases first, so an alias may move between them.
    await tx.query({
      text: `DELETE FROM "device_type_alias" WHERE "device_type" IN
               (SELECT "id" FROM "device_type" WHERE "slug" = ANY($1::text[]))`,
      values: [entries.map((entry) => entry.slug)],
    });
    const held = await tx.query<{ alias: string; slug: string }>({
      text: `SELECT a."is_referenced_by__alias" AS "alias", t."slug" FROM "device_type_alias" a
               JOIN "device_type" t ON t."id" = a."device_type"
              WHERE a."is_referenced_by__alias" = ANY($1::text[])
              ORDER BY a."id"`,
      values: [entries.flatMap((entry) => entry.aliases)],
    });
    for (const taken of held) {
      const e = entries.findIndex((entry) => entry.aliases.includes(taken.alias));
      const a = entries[e]?.aliases.indexOf(taken.alias);
      throw new Conflict(
        `${pathOf(e)}.aliases[${a}]: '${taken.alias}' already names the device type '${taken.slug}'`,
      );
    }
    await saveEntries(tx, entries);
  });
  return { deviceTypes: entries.length };
}
