import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openEmbedded } from "../../src/db/embedded.ts";
import { migrate, migrationsDir, readMigrations } from "../../src/db/migrate.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { actualSchema } from "../support/db/catalog.ts";
import { expectedSchema } from "../support/db/prisma-model.ts";

describe.each(databaseKinds)("migrations on %s", (kind) => {
  let test: TestDatabase;
  let applied: string[];
  beforeAll(async () => {
    test = await freshDatabase(kind, { empty: true });
    applied = await migrate(test.db);
  });
  afterAll(() => test.drop());

  it("applies every migration to an empty database", () => {
    expect(applied).toEqual(readMigrations().map((migration) => migration.name));
    expect(applied.length).toBeGreaterThan(0);
  });

  it("leaves a database whose tables, columns, uniques, indexes and foreign keys match schema.prisma", async () => {
    const [expected, actual] = await Promise.all([expectedSchema(), actualSchema(test.db)]);
    // A comparison of two empty lists would prove nothing.
    expect(expected.columns.length).toBeGreaterThan(100);
    expect(expected.foreignKeys.length).toBeGreaterThan(20);
    expect(actual.columns).toEqual(expected.columns);
    expect(actual.uniques).toEqual(expected.uniques);
    expect(actual.indexes).toEqual(expected.indexes);
    expect(actual.foreignKeys).toEqual(expected.foreignKeys);
  });

  it("is a no-op the second time", async () => {
    expect(await migrate(test.db)).toEqual([]);
  });

  it("records each migration as Prisma does, with the SHA-256 of its file", async () => {
    const rows = await test.db.query<{ migration_name: string; checksum: string; finished_at: unknown }>({
      text: `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name`,
      values: [],
    });
    expect(rows.map((row) => row.migration_name)).toEqual(applied);
    for (const row of rows) {
      const file = readFileSync(join(migrationsDir, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(file).digest("hex"));
      expect(row.finished_at).not.toBeNull();
    }
  });

  it("refuses a migration whose file changed after it was applied", async () => {
    const [first] = readMigrations();
    if (!first) throw new Error("no migrations");
    await expect(migrate(test.db, [{ ...first, checksum: "0".repeat(64) }])).rejects.toThrow(/changed after/);
  });

  it("rolls back a failing migration completely", async () => {
    const broken = {
      name: "99999999999999_broken",
      sql: `CREATE TABLE "half_done" (id INTEGER); SELECT no_such_function();`,
      checksum: "f".repeat(64),
    };
    await expect(migrate(test.db, [broken])).rejects.toThrow(/99999999999999_broken failed/);
    const leftovers = await test.db.query({
      text: `SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'
             UNION ALL SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`,
      values: [broken.name],
    });
    expect(leftovers).toEqual([]);
  });
});

describe("the embedded database", () => {
  it("keeps its data across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fleetgate-embedded-"));
    try {
      const first = await openEmbedded(dir);
      await migrate(first);
      await first.prisma.organization.create({ data: { name: "Kept", handle: "kept" } });
      await first.close();

      const second = await openEmbedded(dir);
      expect(await migrate(second)).toEqual([]);
      expect(await second.prisma.organization.findUnique({ where: { handle: "kept" } })).toMatchObject({
        name: "Kept",
      });
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a second opener of the same directory while the first holds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fleetgate-lock-"));
    try {
      const first = await openEmbedded(dir);
      await expect(openEmbedded(dir)).rejects.toThrow(/in use by process/);
      await first.close();
      const again = await openEmbedded(dir);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
