import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openEmbedded } from "../../src/db/embedded.ts";
import { embeddedTemplate } from "../../src/db/embedded-first-start.ts";

// Issue 28: the embedded default is light. A new data directory is made by a child process (its
// initdb's memory leaves with it), and PostgreSQL runs with memory settings chosen for one process.
// A new directory is a copy of a template made once per PGlite (initdb's output), and a database
// of its own.

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

  it("is a copy of the template, and each copy is a database of its own", async () => {
    const template = await embeddedTemplate();
    expect(template).toMatch(/node_modules\/\.cache\/fleetgate-embedded\/pglite-\d+\.\d+\.\d+$/);
    expect(await embeddedTemplate()).toBe(template);
    const [one, other, third] = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), "fleetgate-copy-")));
    dirs.push(one as string, other as string, third as string);
    const first = await openEmbedded(one);
    const second = await openEmbedded(other);
    try {
      await first.script(`CREATE TABLE "copy" ("n" int4); INSERT INTO "copy" VALUES (1)`);
      const tables = `SELECT count(*)::int4 AS n FROM pg_tables WHERE "tablename" = 'copy'`;
      expect(await second.query({ text: tables, values: [] })).toEqual([{ n: 0 }]);
      // The template itself is left as initdb made it.
      const pristine = await openEmbedded(third);
      try {
        expect(await pristine.query({ text: tables, values: [] })).toEqual([{ n: 0 }]);
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
