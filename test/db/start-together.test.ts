import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureAdmin } from "../../src/accounts.ts";
import { storedSecret } from "../../src/auth/secrets.ts";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import type { Database } from "../../src/db/database.ts";
import { migrate, readMigrations } from "../../src/db/migrate.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { buildModel } from "../../src/model/registry.ts";
import { CommandQueue } from "../../src/proxy/jobs/queue.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// What `fleetgate serve` does before it listens, done by four instances at once on a fresh
// PostgreSQL database, each with its own pool as separate processes would have: every step must
// end with one result, and no instance may fail. test/server/serve-together.test.ts starts four
// real processes.

const instances = 4;

describe.skipIf(!databaseKinds.includes("postgres"))(
  "four instances preparing a fresh PostgreSQL database",
  () => {
    let test: TestDatabase;
    let pools: Database[];

    beforeAll(async () => {
      test = await freshDatabase("postgres", { empty: true });
      pools = Array.from({ length: instances }, () => openPostgres({ url: test.url ?? "", poolSize: 2 }));
    });
    afterAll(async () => {
      await Promise.all(pools.map((pool) => pool.close()));
      await test.drop();
    });

    const atOnce = <T>(work: (db: Database) => Promise<T>) => Promise.all(pools.map(work));

    it("applies each migration once", async () => {
      const applied = await atOnce((db) => migrate(db));
      const names = readMigrations().map((migration) => migration.name);
      expect(applied.flat().sort()).toEqual(names);
      const recorded = await test.db.query<{ migration_name: string }>({
        text: `SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`,
        values: [],
      });
      expect(recorded.map((row) => row.migration_name)).toEqual(names);
    });

    it("creates one admin", async () => {
      const model = buildModel();
      const outcomes = await atOnce((db) =>
        ensureAdmin(db, model, { username: "admin", password: undefined }),
      );
      expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
      const users = await test.db.query<{ username: string; is_admin: boolean }>({
        text: `SELECT "username", "is_admin" FROM "user"`,
        values: [],
      });
      expect(users).toEqual([{ username: "admin", is_admin: true }]);
    });

    it("loads the default catalogue once", async () => {
      const added = await atOnce((db) => loadDefaultCatalogue(db));
      expect(added.filter((count) => count > 0)).toHaveLength(1);
    });

    it("generates one secret, which every instance gets", async () => {
      const secrets = await atOnce((db) => storedSecret(db, "jwt_secret", undefined));
      expect(new Set(secrets).size).toBe(1);
    });

    // pg-boss creates its schema under an advisory lock of its own and ignores the "already exists"
    // of an instance that lost the race; its queue is made with ON CONFLICT DO NOTHING.
    it("starts the job queue in every instance", async () => {
      const errors: Error[] = [];
      const options = { heartbeatSeconds: 30, superviseSeconds: 15, pollSeconds: 2 };
      const queues = await atOnce((db) => CommandQueue.start(db, options, (error) => errors.push(error)));
      await Promise.all(queues.map((queue) => queue.stop(1_000)));
      expect(errors).toEqual([]);
    });
  },
);
