import type { Database } from "../db/database.ts";
import type { CatalogueEntry } from "./schema.ts";
import { saveEntries } from "./store.ts";

// The catalogue that ships with fleetgate (default-catalogue.json, in the format `catalogue import`
// takes) is loaded once per database, on its first start: afterwards the catalogue belongs to the
// operator, so a device type they deleted or replaced stays deleted or replaced.
const MARKER = "default_catalogue";
// Raised when the shipped file gains entries that existing databases should receive too.
const EDITION = "1";

/** The shipped catalogue, validated by the same schema and rules as `fleetgate catalogue import`. */
export async function defaultCatalogue(): Promise<CatalogueEntry[]> {
  // Loaded only when needed: every start after the first reads one row and nothing else.
  const [{ default: json }, { parseCatalogueFile }] = await Promise.all([
    import("./default-catalogue.json", { with: { type: "json" } }),
    import("./parse-file.ts"),
  ]);
  return parseCatalogueFile(json).entries;
}

/**
 * Adds the shipped device types on the first start of a database, and does nothing afterwards
 * (one statement). Entries never replace what is there: a slug or alias already taken (by a file
 * imported before the first start) keeps its device type. Answers how many device types it added.
 */
export async function loadDefaultCatalogue(db: Database): Promise<number> {
  const [loaded] = await db.query({
    text: `SELECT 1 FROM "setting" WHERE "name" = $1::text`,
    values: [MARKER],
  });
  if (loaded) return 0;
  const entries = await defaultCatalogue();
  return db.prisma.$transaction(
    async (tx) => {
      // Two processes starting at once: the one that records the marker loads the catalogue.
      const { count } = await tx.setting.createMany({
        data: [{ name: MARKER, value: EDITION }],
        skipDuplicates: true,
      });
      if (count === 0) return 0;
      const taken = new Set([
        ...(await tx.deviceType.findMany({ select: { slug: true } })).map((row) => row.slug),
        ...(await tx.deviceTypeAlias.findMany({ select: { is_referenced_by__alias: true } })).map(
          (row) => row.is_referenced_by__alias,
        ),
      ]);
      const fresh = entries.filter((entry) =>
        [entry.slug, ...entry.aliases].every((name) => !taken.has(name)),
      );
      await saveEntries(tx, fresh);
      return fresh.length;
    },
    { timeout: 60_000 },
  );
}
