import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { channels } from "../../src/db/channels.ts";
import { createBus, type EventBus } from "../../src/events/bus.ts";
import { createLogger } from "../../src/logger.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// The change bus on each database: a NOTIFY reaches every subscriber when its transaction commits,
// never when it rolls back, and no more once unsubscribed; on PostgreSQL the listening connection
// comes back after the server drops it, and subscribers hear they may have missed notifications.

const notify = (test: TestDatabase, channel: string, payload: string) =>
  test.db.query({ text: "SELECT pg_notify($1, $2)", values: [channel, payload] });

/** Resolves once `received` holds `count` payloads; fails after `timeoutMs`. */
async function until(received: string[], count: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (received.length < count) {
    if (Date.now() > deadline) throw new Error(`got ${JSON.stringify(received)}, wanted ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(databaseKinds)("the change bus on %s", (kind) => {
  let test: TestDatabase;
  let bus: EventBus;
  beforeAll(async () => {
    test = await freshDatabase(kind);
    bus = createBus(test.db, createLogger("silent"));
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await test?.drop();
  });

  it("delivers committed notifications to every subscriber of the channel, and only those", {
    timeout: 60_000,
  }, async () => {
    const first: string[] = [];
    const second: string[] = [];
    const other: string[] = [];
    const stopFirst = bus.subscribe(channels.device, (payload) => first.push(payload));
    const stopSecond = bus.subscribe(channels.device, (payload) => second.push(payload));
    const stopOther = bus.subscribe(channels.fleet, (payload) => other.push(payload));
    // LISTEN is asynchronous: wait until a probe comes through.
    for (let probe = 0; first.length === 0; probe++) {
      await notify(test, channels.device, `probe${probe}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    first.length = 0;
    second.length = 0;

    await test.db
      .transaction(async (tx) => {
        await tx.query({ text: "SELECT pg_notify($1, '1:1')", values: [channels.device] });
        throw new Error("rolled back");
      })
      .catch(() => {});
    await test.db.transaction(async (tx) => {
      await tx.query({ text: "SELECT pg_notify($1, '2:1')", values: [channels.device] });
    });
    await until(first, 1);
    await until(second, 1);
    expect(first).toEqual(["2:1"]);
    expect(second).toEqual(["2:1"]);
    expect(other).toEqual([]);

    stopFirst();
    await notify(test, channels.device, "3:1");
    await until(second, 2);
    expect(first).toEqual(["2:1"]);
    stopSecond();
    stopOther();
  });

  it("tells each subscriber when it closes, and takes no subscriber after", { timeout: 30_000 }, async () => {
    const own = createBus(test.db, createLogger("silent"));
    const ended: string[] = [];
    own.subscribe(
      channels.device,
      () => {},
      () => ended.push("device"),
    );
    const stop = own.subscribe(
      channels.fleet,
      () => {},
      () => ended.push("fleet"),
    );
    stop();
    await own.close();
    expect(ended).toEqual(["device"]);
    own.subscribe(
      channels.device,
      () => {},
      () => ended.push("late"),
    );
    expect(ended).toEqual(["device", "late"]);
  });

  it.runIf(kind === "postgres")(
    "listens again after PostgreSQL drops its connection, without crashing, and says changes were missed",
    { timeout: 60_000 },
    async () => {
      const received: string[] = [];
      let missed = 0;
      const stop = bus.subscribe(
        channels.commandJob,
        (payload) => received.push(payload),
        undefined,
        () => missed++,
      );
      for (let probe = 0; received.length === 0; probe++) {
        await notify(test, channels.commandJob, `probe${probe}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const [dropped] = await test.db.query<{ dropped: boolean }>({
        text: `SELECT bool_or(pg_terminate_backend(pid)) AS dropped FROM pg_stat_activity
                WHERE application_name = 'fleetgate-listen' AND datname = current_database()`,
        values: [],
      });
      expect(dropped?.dropped).toBe(true);
      received.length = 0;
      // Notifications sent while it reconnects are lost (NOTIFY keeps none); the ones after arrive.
      const deadline = Date.now() + 30_000;
      while (!received.includes("after")) {
        if (Date.now() > deadline)
          throw new Error(`nothing after the reconnection: ${JSON.stringify(received)}`);
        await notify(test, channels.commandJob, "after");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Once listening again, so that a subscriber reading what it watches misses nothing.
      expect(missed).toBe(1);
      stop();
    },
  );
});
