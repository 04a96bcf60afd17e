import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { channels } from "../../src/db/channels.ts";
import { type DeviceCaller, TargetReads, targetDigest } from "../../src/devices/target.ts";
import { TargetCache } from "../../src/devices/target-cache.ts";
import { type PartsTarget, TargetParts } from "../../src/devices/target-parts.ts";
import { createBus, type EventBus } from "../../src/events/bus.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { counting } from "../support/devices/target-instances.ts";

// src/devices/target-parts.ts on its own: a target read from parts is the whole read's (its digest
// is the whole text's), a part is read again only when announced changed, evicted past its bytes,
// and not used while the announcements are not heard.

describe.each(databaseKinds)("target parts on %s", (kind) => {
  let test: TestDatabase;
  let bus: EventBus;
  let cache: TargetCache;
  let unfollow: () => void;
  const model = buildModel();
  const whole = new TargetReads(model);
  const counter = { n: 0 };
  let callers: DeviceCaller[];

  beforeAll(async () => {
    test = await freshDatabase(kind);
    await seedDemo(test.db);
    bus = createBus(test.db, createLogger("silent"));
    cache = new TargetCache(1_000);
    unfollow = cache.follow(bus);
    await bus.listening(channels.target);
    const rows = await test.db.query<{ id: number; uuid: string; actor: number; fleet: number }>({
      text: `SELECT "id", "uuid", "actor", "belongs_to__application" AS fleet FROM "device" ORDER BY "id"`,
      values: [],
    });
    callers = rows.map((row) => ({
      kind: "device",
      actor: row.actor,
      deviceId: row.id,
      uuid: row.uuid,
      applicationId: row.fleet,
    }));
    expect(new Set(callers.map((caller) => caller.applicationId)).size).toBeGreaterThan(1);
  }, 120_000);
  afterAll(async () => {
    unfollow?.();
    await bus?.close();
    await test?.drop();
  });

  /** Reads every device from `parts`: each must be its whole read; the statements it took. */
  async function readAll(parts: TargetParts): Promise<number> {
    const db = counting(test.db, counter);
    const before = counter.n;
    for (const caller of callers) {
      const target = (await parts.read(db, caller)) as PartsTarget;
      const json = (await whole.read(test.db, caller)) as string;
      expect(target.digest).toBe(targetDigest(json));
      expect(JSON.stringify(target.row)).toBe(JSON.stringify(JSON.parse(json)[0]));
    }
    return counter.n - before;
  }
  const fleets = () => new Set(callers.map((caller) => caller.applicationId)).size;
  /** Every part is read for each poll: the device's own, its fleet's and its pin's. */
  const uncached = () => 2 * callers.length + pinned.length;
  let pinned: number[];

  it("reads each fleet's and pin's part once, and again only after its change is announced", async () => {
    // Two devices pinned to one release (and the rest to none).
    const [first, second] = callers;
    const [release] = await test.db.query<{ id: number }>({
      text: `SELECT "id" FROM "release" WHERE "belongs_to__application" = $1 ORDER BY "id" LIMIT 1`,
      values: [first?.applicationId],
    });
    await test.db.query({
      text: `UPDATE "device" SET "should_be_running__release" = CASE WHEN "id" = ANY($1) THEN $2::int4 END`,
      values: [
        [first?.deviceId, second?.applicationId === first?.applicationId ? second?.deviceId : 0],
        release?.id,
      ],
    });
    pinned = (
      await test.db.query<{ id: number }>({
        text: `SELECT "id" FROM "device" WHERE "should_be_running__release" IS NOT NULL`,
        values: [],
      })
    ).map((row) => row.id);
    const parts = new TargetParts(model, cache, 1024 * 1024);
    expect(await readAll(parts)).toBe(callers.length + fleets() + 1);
    expect(await readAll(parts)).toBe(callers.length);
    const fleet = first?.applicationId;
    const at = cache.stamp();
    await test.db.query({
      text: `INSERT INTO "application_config_variable" ("application", "name", "value") VALUES ($1, 'BALENA_X', 'y')`,
      values: [fleet],
    });
    // Its announcement (PostgreSQL's comes a moment after the commit).
    while (cache.unchangedSince(at, [`fleet:${fleet}`]))
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await readAll(parts)).toBe(callers.length + 1);
    expect(await readAll(parts)).toBe(callers.length);
  });

  it("keeps no more than its bytes, the least recently used going first", async () => {
    const parts = new TargetParts(model, cache, 1);
    // Every part is past the budget: each is read for its poll and not kept.
    expect(await readAll(parts)).toBe(uncached());
    expect(parts.count).toBeLessThanOrEqual(1);
  });

  it("uses and keeps nothing while the announcements are not heard", async () => {
    const deaf = new TargetCache(1_000);
    const parts = new TargetParts(model, deaf, 1024 * 1024);
    expect(await readAll(parts)).toBe(uncached());
    expect(parts.count).toBe(0);
  });
});
