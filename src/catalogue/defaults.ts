import type { Database } from "../db/database.ts";
import { syncHostFleets } from "./host-fleets.ts";
import type { CatalogueEntry } from "./schema.ts";
import { saveEntries } from "./store.ts";

// The catalogue that ships with fleetgate (default-catalogue.json, in the format `catalogue import`
// takes) is loaded once per database, on its first start: afterwards the catalogue belongs to the
// operator, so a device type they deleted or replaced stays deleted or replaced.
const MARKER = "default_catalogue";
// Raised when the shipped file gains entries that existing databases should receive too.
// Edition 2: every device type has its host OS fleet (host-fleets.ts).
const EDITION = "2";

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
 * Adds the shipped device types (and their host OS fleets) on the first start of a database, and
 * does nothing afterwards (one statement). Entries never replace what is there: a slug or alias
 * already taken (by a file imported before the first start) keeps its device type. Answers how many
 * device types it added. System write: the server's first-start catalogue and its marker in
 * `setting`, which is not a resource.
 * `hostFleets: false` leaves the host OS fleets to the caller (the demo seed makes them after its
 * own fleets, so those keep the first ids).
 */
export async function loadDefaultCatalogue(
  db: Database,
  { hostFleets = true }: { readonly hostFleets?: boolean } = {},
): Promise<number> {
  const [loaded] = await db.query<{ value: string }>({
    text: `SELECT "value" FROM "setting" WHERE "name" = $1::text`,
    values: [MARKER],
  });
  if (loaded?.value === EDITION) return 0;
  if (loaded) {
    // A database loaded by an earlier edition: its device types get their host OS fleets, once.
    await db.transaction(async (tx) => {
      const upgraded = await tx.query({
        text: `UPDATE "setting" SET "value" = $2::text WHERE "name" = $1::text AND "value" = $3::text RETURNING "name"`,
        values: [MARKER, EDITION, loaded.value],
      });
      if (upgraded.length > 0 && hostFleets) await syncHostFleets(tx);
    });
    return 0;
  }
  const entries = await defaultCatalogue();
  return db.transaction(async (tx) => {
    // Two processes starting at once: the one that records the marker loads the catalogue.
    const recorded = await tx.query({
      text: `INSERT INTO "setting" ("name", "value") VALUES ($1::text, $2::text)
             ON CONFLICT ("name") DO NOTHING RETURNING "name"`,
      values: [MARKER, EDITION],
    });
    if (recorded.length === 0) return 0;
    const names = await tx.query<{ name: string }>({
      text: `SELECT "slug" AS "name" FROM "device_type"
             UNION ALL SELECT "is_referenced_by__alias" FROM "device_type_alias"`,
      values: [],
    });
    const taken = new Set(names.map((row) => row.name));
    const fresh = entries.filter((entry) => [entry.slug, ...entry.aliases].every((name) => !taken.has(name)));
    await saveEntries(tx, fresh, { hostFleets });
    return fresh.length;
  });
}
