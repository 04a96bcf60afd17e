import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openEmbedded } from "../../src/db/embedded.ts";
import { embeddedTemplate } from "../../src/db/embedded-first-start.ts";
import { migrate, readMigrations } from "../../src/db/migrate.ts";

// Issue 28: the embedded default is light. A new data directory is made by a child process (its
// initdb's memory leaves with it), and PostgreSQL runs with memory settings chosen for one process.
// A new directory is a copy of a template made once per PGlite and set of migrations: already
// migrated, and a database of its own.

describe("the embedded database's data directory", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("is created on the first start only, says so, and keeps what was written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fleetgate-first-start-"));
    dirs.push(dir);
    const said: string[] = [];
    const first = await openEmbedded(dir, { progress: (message) => said.push(message) });
    await first.script(`CREATE TABLE "kept" ("n" int4); INSERT INTO "kept" VALUES (7)`);
    await first.close();
    expect(said).toEqual([`creating the embedded database in ${dir} (first start only)`]);

    const again = await openEmbedded(dir, { progress: (message) => said.push(message) });
    try {
      expect(await again.query({ text: `SELECT "n" FROM "kept"`, values: [] })).toEqual([{ n: 7 }]);
      expect(said).toHaveLength(1);
    } finally {
      await again.close();
    }
  }, 60_000);

  it("is a copy of the migrated template, and each copy is a database of its own", async () => {
    const template = await embeddedTemplate();
    expect(template).toMatch(/node_modules\/\.cache\/fleetgate-embedded\/pglite-[\d.]+-[0-9a-f]{16}$/);
    expect(await embeddedTemplate()).toBe(template);
    const [one, other] = [0, 1].map(() => mkdtempSync(join(tmpdir(), "fleetgate-copy-")));
    dirs.push(one as string, other as string);
    const first = await openEmbedded(one);
    const second = await openEmbedded(other);
    try {
      const applied = await first.query<{ migration_name: string }>({
        text: `SELECT "migration_name" FROM "_prisma_migrations" ORDER BY "migration_name"`,
        values: [],
      });
      expect(applied.map((row) => row.migration_name)).toEqual(readMigrations().map((m) => m.name));
      expect(await migrate(first)).toEqual([]);
      await first.query({
        text: `INSERT INTO "setting" ("name", "value") VALUES ('copy', 'one')`,
        values: [],
      });
      expect(
        await second.query({ text: `SELECT * FROM "setting" WHERE "name" = 'copy'`, values: [] }),
      ).toEqual([]);
      // The template itself is left as it was made.
      const pristine = await openEmbedded(mkdtempSync(join(tmpdir(), "fleetgate-copy-")));
      try {
        expect(await pristine.query({ text: `SELECT * FROM "setting"`, values: [] })).toEqual([]);
      } finally {
        await pristine.close();
      }
    } finally {
      await first.close();
      await second.close();
    }
  }, 120_000);

  it("runs PostgreSQL with fleetgate's memory settings, not a server's own defaults", async () => {
    const db = await openEmbedded(undefined);
    try {
      const settings = await db.query<{ name: string; setting: string; unit: string }>({
        text: `SELECT "name", "setting", "unit" FROM pg_settings
               WHERE "name" IN ('shared_buffers', 'maintenance_work_mem', 'max_connections') ORDER BY "name"`,
        values: [],
      });
      expect(settings).toEqual([
        { name: "maintenance_work_mem", setting: "16384", unit: "kB" },
        { name: "max_connections", setting: "10", unit: null },
        { name: "shared_buffers", setting: "2048", unit: "8kB" },
      ]);
    } finally {
      await db.close();
    }
  }, 60_000);
});
