import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { channels } from "../../src/db/channels.ts";
import { ReportBatcher } from "../../src/devices/report-batcher.ts";
import { type ReportRow, recordStates, reportRow } from "../../src/devices/state.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { parseExposition, sampleValue } from "../support/http/prometheus.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 46, item 2: concurrent state reports are written together (src/devices/report-batcher.ts),
// each answered once its batch committed, each with its own answer and its own refusal.

const DEVICES = 60;

interface Device {
  readonly uuid: string;
  readonly key: string;
  readonly id: number;
}

const uuidOf = (n: number) => `${"ba7c4e5".padEnd(26, "0")}${String(n).padStart(6, "0")}`;

describe.each(databaseKinds)("state reports written together on %s", (kind) => {
  let server: TestServer;
  const devices: Device[] = [];
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const provisioning = JSON.parse(
      (await server.app.inject({ method: "POST", url: "/api-key/application/1/provisioning" })).body,
    ) as string;
    for (let n = 0; n < DEVICES; n++) {
      const response = await server.app.inject({
        method: "POST",
        url: "/device/register",
        headers: { authorization: `Bearer ${provisioning}` },
        payload: { application: 1, uuid: uuidOf(n) },
      });
      expect(response.statusCode, response.body).toBe(201);
      const body = JSON.parse(response.body) as { id: number; api_key: string };
      devices.push({ uuid: uuidOf(n), key: body.api_key, id: body.id });
    }
  }, 120_000);
  afterAll(() => server?.close());

  /** A v2 report over real HTTP, with `key` (the device's own unless given). */
  const report = async (device: Device, body: object, key = device.key) => {
    const response = await fetch(`${server.url}/device/v2/${device.uuid}/state`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.text() };
  };
  const statements = async () => {
    const scrape = await server.app.inject({ method: "GET", url: "/metrics" });
    const value = sampleValue(parseExposition(scrape.body).samples, "fleetgate_db_statements_total", {
      target: "primary",
    });
    if (value === undefined) throw new Error("no fleetgate_db_statements_total");
    return value;
  };
  const rows = async () =>
    new Map(
      (
        await server.test.db.query<Record<string, unknown> & { uuid: string }>({
          text: `SELECT * FROM "device" WHERE "uuid" LIKE 'ba7c4e5%'`,
          values: [],
        })
      ).map((row) => [row.uuid, row]),
    );

  it("writes many devices' concurrent reports, each with its own values and answer, in far fewer statements", async () => {
    // Every device's key is in the credential cache after a first report: the second round's
    // statements are the reports' own.
    const first = await Promise.all(devices.map((device) => report(device, { status: "Starting" })));
    expect(first.map((answer) => answer.status)).toEqual(devices.map(() => 200));
    const before = await statements();
    const second = await Promise.all(
      devices.map((device, n) =>
        report(device, {
          status: `Idle ${n}`,
          ip_address: `10.46.0.${n}`,
          memory_usage: 1000 + n,
          is_undervolted: n % 2 === 0,
          cpu_temp: n % 100,
        }),
      ),
    );
    const sent = (await statements()) - before;
    expect(second.map((answer) => answer.status)).toEqual(devices.map(() => 200));
    expect(second.every((answer) => answer.body === '"OK"')).toBe(true);
    // One statement per batch (and a scrape's own): far fewer than one per report.
    console.info(`${devices.length} concurrent reports on ${kind}: ${sent} statements`);
    expect(sent).toBeLessThanOrEqual(devices.length / 4);
    const stored = await rows();
    devices.forEach((device, n) => {
      expect(stored.get(device.uuid)).toMatchObject({
        status: `Idle ${n}`,
        ip_address: `10.46.0.${n}`,
        memory_usage: 1000 + n,
        is_undervolted: n % 2 === 0,
        cpu_temp: n % 100,
        is_online: true,
        api_heartbeat_state: "online",
      });
    });
  });

  it("refuses a report under another device's key alone, as before, and writes the others", async () => {
    const [victim, thief, ...good] = devices.slice(0, 12) as [Device, Device, ...Device[]];
    const before = await rows();
    const answers = await Promise.all([
      report(victim, { status: "stolen" }, thief.key),
      report(victim, { status: "stolen" }, "not-a-key"),
      ...good.map((device, n) => report(device, { status: `good ${n}` })),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, ...good.map(() => 200)]);
    const after = await rows();
    expect(after.get(victim.uuid)?.status).toBe(before.get(victim.uuid)?.status);
    good.forEach((device, n) => {
      expect(after.get(device.uuid)?.status).toBe(`good ${n}`);
    });
  });

  it("answers a report that fails its batch's statement alone, and writes the rest of the batch", async () => {
    // A failure of one report's row fails the batch's one statement: a check the test adds.
    await server.test.db.query({
      text: `ALTER TABLE "device" ADD CONSTRAINT "test_no_boom" CHECK ("status" IS DISTINCT FROM 'boom')`,
      values: [],
    });
    try {
      const keys = new KeyBox("0".repeat(64));
      const batcher = new ReportBatcher<ReportRow>((items) => recordStates(server.test.db, items));
      const [a, b, c] = devices as [Device, Device, Device];
      // Submitted in one turn: one batch (the window is longer than a turn).
      const outcomes = await Promise.allSettled([
        batcher.submit(reportRow(a.uuid, { status: "fine a" }, keys)),
        batcher.submit(reportRow(b.uuid, { status: "boom" }, keys)),
        batcher.submit(reportRow(uuidOf(999_999), { status: "nobody" }, keys)),
        batcher.submit(reportRow(c.uuid, { status: "fine c" }, keys)),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      // The device that does not exist is told so, alone.
      expect(outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : "error"))).toEqual([
        true,
        "error",
        false,
        true,
      ]);
      const stored = await rows();
      expect(stored.get(a.uuid)?.status).toBe("fine a");
      expect(stored.get(b.uuid)?.status).not.toBe("boom");
      expect(stored.get(c.uuid)?.status).toBe("fine c");
      // Over HTTP: the bad report is its own 500, the others 200.
      const answers = await Promise.all([
        report(a, { status: "http a" }),
        report(b, { status: "boom" }),
        report(c, { status: "http c" }),
      ]);
      expect([answers[0]?.status, answers[2]?.status]).toEqual([200, 200]);
      expect(answers[1]?.status).toBeGreaterThanOrEqual(400);
      const after = await rows();
      expect([after.get(a.uuid)?.status, after.get(c.uuid)?.status]).toEqual(["http a", "http c"]);
    } finally {
      await server.test.db.query({
        text: `ALTER TABLE "device" DROP CONSTRAINT "test_no_boom"`,
        values: [],
      });
    }
  });

  it("writes one device's concurrent reports one after another, the last one sent last", async () => {
    const device = devices[20] as Device;
    const batcher = new ReportBatcher<ReportRow>((items) => recordStates(server.test.db, items));
    const keys = new KeyBox("0".repeat(64));
    const found = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => batcher.submit(reportRow(device.uuid, { memory_usage: n }, keys))),
    );
    expect(found).toEqual([true, true, true, true, true]);
    expect((await rows()).get(device.uuid)?.memory_usage).toBe(5);
  });

  it("moves only the heartbeat on a report that changes nothing, and announces nothing", async () => {
    const device = devices[30] as Device;
    const body = { status: "Idle", ip_address: "10.0.0.30", os_version: "balenaOS 6.0.0" };
    expect((await report(device, body)).status).toBe(200);
    const before = (await rows()).get(device.uuid);
    const heard: string[] = [];
    const stops = await Promise.all(
      [channels.device, channels.target].map(
        (channel) => server.test.db.listen?.(channel, (payload) => heard.push(`${channel} ${payload}`)) ?? [],
      ),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await report(device, body)).status).toBe(200);
      expect((await report(device, {})).status).toBe(200);
      const after = (await rows()).get(device.uuid);
      // A sentinel: a report that changes a watched column of another device is announced; once its
      // announcement arrived, any of the reports before it would have too.
      const sentinel = devices[31] as Device;
      expect((await report(sentinel, { status: `sentinel ${Date.now()}` })).status).toBe(200);
      await expect.poll(() => heard.includes(`${channels.device} ${sentinel.id}:1`)).toBe(true);
      const own = [`${channels.device} ${device.id}:1`, `${channels.target} device:${device.id}`];
      expect(heard.filter((line) => own.includes(line))).toEqual([]);
      if (!after || !before) throw new Error("the device vanished");
      const { last_heartbeat_at: beat, ...rest } = after;
      const { last_heartbeat_at: beatBefore, ...restBefore } = before;
      expect(rest).toEqual(restBefore);
      expect((beat as Date).getTime()).toBeGreaterThan((beatBefore as Date).getTime());
    } finally {
      for (const stop of stops) if (typeof stop === "function") await stop();
    }
  });
});
