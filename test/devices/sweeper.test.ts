import { afterEach, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe.each(databaseKinds)("the offline sweeper on %s", (kind) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A server whose demo devices are all online, silent for 100 days. */
  async function silentFleet(offlineTimeoutSeconds: number) {
    server = await startTestServer(kind, { DEVICE_OFFLINE_TIMEOUT: String(offlineTimeoutSeconds) });
    await seedDemo(server.test.db);
    await server.test.db.query({
      text: `UPDATE "device" SET "is_online" = true, "last_heartbeat_at" = now() - interval '100 days'`,
      values: [],
    });
    const db = server.test.db;
    return async () => {
      const [row] = await db.query<{ n: number }>({
        text: `SELECT count(*)::int AS n FROM "device" WHERE "is_online"`,
        values: [],
      });
      return row?.n ?? 0;
    };
  }

  it("marks silent devices offline every third of DEVICE_OFFLINE_TIMEOUT", async () => {
    const online = await silentFleet(3);
    expect(await online()).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while ((await online()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await online()).toBe(0);
  });

  it("does not run every millisecond when a third of the time-out is past Node's timer limit", async () => {
    // 7,000,000 s is 81 days: devices silent for 100 days are due, but not for another 27 days.
    const online = await silentFleet(7_000_000);
    const before = await online();
    expect(before).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await online()).toBe(before);
  });
});
