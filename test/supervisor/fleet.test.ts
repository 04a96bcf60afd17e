import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { type FleetDevice, startFleet, stopFleet } from "../support/supervisor/fleet.ts";

describe("fleetgate fleet against the real server", () => {
  let server: TestServer;
  let provisioningKey: string;
  const base = mkdtempSync(join(tmpdir(), "fleetgate-fleet-"));
  beforeAll(async () => {
    server = await startTestServer("embedded");
    await seedDemo(server.test.db);
    provisioningKey = JSON.parse(
      (await server.app.inject({ method: "POST", url: "/api-key/application/2/provisioning" })).body,
    );
  });
  afterAll(async () => {
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const common = (dir: string) => [
    ...[
      "--api",
      server.url,
      "--provisioning-key",
      provisioningKey,
      "--fleet",
      "2",
      "--data-dir",
      join(base, dir),
    ],
    ...["--heartbeat-interval", "1", "--poll-interval", "2", "--download-ms", "100", "--install-ms", "50"],
  ];

  it("runs 50 devices that register and show up online, with their state, in OData", {
    timeout: 180_000,
  }, async () => {
    const { child, devices } = await startFleet([...common("fifty"), "--devices", "50"], 50);
    try {
      expect(new Set(devices.map((device) => device.uuid)).size).toBe(50);
      expect(new Set(devices.map((device) => device.port)).size).toBe(50);
      const uuids = devices.map((device) => `'${device.uuid}'`).join(",");
      const deadline = Date.now() + 90_000;
      let rows: { is_online: boolean; status: string; supervisor_version: string; overall_status: string }[] =
        [];
      for (;;) {
        const response = await server.app.inject({
          method: "GET",
          url: `/v6/device?$select=uuid,is_online,status,supervisor_version,overall_status&$filter=uuid in (${uuids})`,
        });
        rows = JSON.parse(response.body).d;
        if (rows.length === 50 && rows.every((row) => row.is_online && row.status === "Idle")) break;
        if (Date.now() > deadline)
          throw new Error(`not all online and idle: ${JSON.stringify(rows.slice(0, 3))}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(rows.every((row) => row.supervisor_version === "17.1.4" && row.overall_status === "idle")).toBe(
        true,
      );
    } finally {
      expect(await stopFleet(child)).toBe(0);
    }
  });

  it("mixes supervisor versions in turn, each serving only what its version has", {
    timeout: 120_000,
  }, async () => {
    const { child, devices } = await startFleet(
      [...common("mixed"), "--devices", "3", "--supervisor-version", "17.1.4,6.5.0,1.8.0"],
      3,
    );
    try {
      const status = async (device: FleetDevice | undefined) =>
        (await fetch(`http://127.0.0.1:${device?.port}/v1/device/host-config?apikey=${device?.apiKey}`))
          .status;
      // host-config came in 6.6.0.
      expect([await status(devices[0]), await status(devices[1]), await status(devices[2])]).toEqual([
        200, 404, 404,
      ]);
      const uuids = devices.map((device) => `'${device.uuid}'`).join(",");
      const deadline = Date.now() + 60_000;
      for (;;) {
        const response = await server.app.inject({
          method: "GET",
          url: `/v6/device?$select=supervisor_version&$filter=uuid in (${uuids})`,
        });
        const versions = (JSON.parse(response.body).d as { supervisor_version: string | null }[])
          .map((row) => row.supervisor_version)
          .sort();
        if (JSON.stringify(versions) === JSON.stringify(["1.8.0", "17.1.4", "6.5.0"])) break;
        if (Date.now() > deadline) throw new Error(`versions not reported: ${JSON.stringify(versions)}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    } finally {
      expect(await stopFleet(child)).toBe(0);
    }
  });

  it("injects faults: a delayed, failing API, devices holding the update lock, devices going away", {
    timeout: 120_000,
  }, async () => {
    const dir = join(base, "faulty");
    const { child, devices } = await startFleet(
      [
        ...common("faulty"),
        "--devices",
        "4",
        "--delay-ms",
        "50",
        "--error-rate",
        "1",
        "--locked-share",
        "0.5",
        "--offline-share",
        "0.25",
      ],
      3,
    );
    try {
      // One in four went away: three listen.
      expect(devices).toHaveLength(3);
      const started = Date.now();
      const [first] = devices;
      const response = await fetch(`http://127.0.0.1:${first?.port}/v1/device?apikey=${first?.apiKey}`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: "failed", message: "Injected fault" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      // The first half hold the update lock, as their application would.
      expect([0, 1, 2, 3].map((n) => existsSync(join(dir, String(n), "updates.lock")))).toEqual([
        true,
        true,
        false,
        false,
      ]);
    } finally {
      expect(await stopFleet(child)).toBe(0);
    }
  });
});
