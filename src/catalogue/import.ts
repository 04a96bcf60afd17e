import type { Database } from "../db/database.ts";
import { Conflict } from "../errors.ts";
import { parseCatalogueFile } from "./parse-file.ts";
import { saveEntries } from "./store.ts";

/**
 * Loads a catalogue file in one transaction: entries are created or replaced by slug, device types
 * the file does not name stay as they are. An invalid file, or an alias another device type holds,
 * changes nothing.
 */
export async function importCatalogue(db: Database, json: unknown): Promise<{ deviceTypes: number }> {
  const { entries, pathOf } = parseCatalogueFile(json);
  await db.prisma.$transaction(
    async (tx) => {
      // The file's own device types give up their aliases first, so an alias may move between them.
      await tx.deviceTypeAlias.deleteMany({
        where: { DeviceType: { slug: { in: entries.map((entry) => entry.slug) } } },
      });
      const held = await tx.deviceTypeAlias.findMany({
        where: { is_referenced_by__alias: { in: entries.flatMap((entry) => entry.aliases) } },
        include: { DeviceType: { select: { slug: true } } },
      });
      for (const taken of held) {
        const e = entries.findIndex((entry) => entry.aliases.includes(taken.is_referenced_by__alias));
        const a = entries[e]?.aliases.indexOf(taken.is_referenced_by__alias);
        throw new Conflict(
          `${pathOf(e)}.aliases[${a}]: '${taken.is_referenced_by__alias}' already names the device type '${taken.DeviceType.slug}'`,
        );
      }
      await saveEntries(tx, entries);
    },
    { timeout: 60_000 },
  );
  return { deviceTypes: entries.length };
}
