import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { type RunningServer, startServer } from "../support/processes.ts";
import { testAdminKey } from "../support/server.ts";

// Issue 46, item 2, "Done when": reports are written together and answered only once their batch
// committed, so a server killed outright (SIGKILL, no shutdown) under load has lost no report it
// answered. Each device reports a counter, one report after another: the database must hold, for
// each, the last counter answered 200 or a later one (sent, not answered, yet committed).

const DEVICES = 80;
const ANSWERED_BEFORE_KILL = 1_500;

const uuidOf = (n: number) => `${"5191c111".padEnd(26, "0")}${String(n).padStart(6, "0")}`;

describe.runIf(databaseKinds.includes("postgres"))("reports answered before a SIGKILL", () => {
  let test: TestDatabase;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    test = await freshDatabase("postgres");
    await seedDemo(test.db);
  }, 60_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGKILL");
      await server.stop();
    }
    await test?.drop();
  });

  it("are all in the database", { timeout: 180_000 }, async () => {
    const adminKey = await testAdminKey(test);
    // A wider window than the default 2 ms: a report answered before its batch committed would
    // wait that long to be lost, so the kill below would find it.
    server = await startServer({ DATABASE_URL: test.url as string, DEVICE_REPORT_WINDOW_MS: "25" });
    const base = server.url;
    const post = async (path: string, key: string, body?: object) => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    const provisioning = (await post("/api-key/application/1/provisioning", adminKey)) as string;
    const keys: string[] = [];
    for (let n = 0; n < DEVICES; n++) {
      const device = await post("/device/register", provisioning, { application: 1, uuid: uuidOf(n) });
      keys.push(device.api_key as string);
    }

    // Each device's last counter answered 200.
    const answered = new Array<number>(DEVICES).fill(0);
    let answers = 0;
    let running = true;
    const child = server.child;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const loop = async (n: number) => {
      for (let counter = 1; running; counter++) {
        const response = await fetch(`${base}/device/v2/${uuidOf(n)}/state`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${keys[n]}`, "content-type": "application/json" },
          body: JSON.stringify({ memory_usage: counter, status: `report ${counter}` }),
        }).catch(() => undefined);
        if (response === undefined) return;
        const body = await response.text().catch(() => undefined);
        if (response.status !== 200 || body === undefined) return;
        answered[n] = counter;
        answers++;
        // Killed the moment an answer arrives, under load: a report answered before its batch
        // committed would be lost now.
        if (answers === ANSWERED_BEFORE_KILL) child.kill("SIGKILL");
      }
    };
    const loops = Array.from({ length: DEVICES }, (_, n) => loop(n));
    await exited;
    running = false;
    // Already dead: stop's SIGTERM goes nowhere, and it resolves with the exit.
    const exit = await server.stop();
    await Promise.all(loops);
    expect(exit).toBeNull();
    expect(child.signalCode).toBe("SIGKILL");

    const rows = await test.db.query<{ uuid: string; memory_usage: number | null; status: string | null }>({
      text: `SELECT "uuid", "memory_usage", "status" FROM "device" WHERE "uuid" LIKE '5191c111%'`,
      values: [],
    });
    const stored = new Map(rows.map((row) => [row.uuid, row]));
    const lost = answered.flatMap((counter, n) => {
      if (counter === 0) return [];
      const row = stored.get(uuidOf(n));
      const kept = row?.memory_usage ?? 0;
      return kept >= counter && row?.status === `report ${kept}`
        ? []
        : [`${uuidOf(n)}: answered ${counter}, stored ${kept} (${row?.status})`];
    });
    console.info(
      `SIGKILL after ${answers} answered reports (${answered.filter((c) => c > 0).length} devices)`,
    );
    expect(lost).toEqual([]);
  });
});
