import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  client,
  removeDir,
  type SupervisorProcess,
  tempDir,
  unmanaged,
} from "../support/supervisor/supervisor-process.ts";

// --supervisor-version X serves the v2 endpoints X had, per balena-supervisor's docs/API.md:
// the app actions from 7.0.0 (serviceName besides imageId from 8.2.2), the app states from
// 7.12, version and local from 7.21, containerId 8.6, state/status 9.7, device name and tags
// 9.11, cleanup-volumes 10.0, journal-logs 10.2 (its `format` 10.3), device/vpn 11.4.
// Each boundary is checked on both sides; a missing endpoint is a 404 like any unknown path.

const PARTS = [
  "actions",
  "appState",
  "local",
  "containerId",
  "stateStatus",
  "deviceInfo",
  "cleanup",
  "journal",
  "vpn",
] as const;
const BOUNDARIES: [version: string, parts: number][] = [
  ["6.9.9", 0],
  ["7.0.0", 1],
  ["7.11.9", 1],
  ["7.12.0", 2],
  ["7.21.0", 3],
  ["8.6.0", 4],
  ["9.6.9", 4],
  ["9.7.0", 5],
  ["9.11.0", 6],
  ["10.0.0", 7],
  ["10.1.9", 7],
  ["10.2.0", 8],
  ["11.3.9", 8],
  ["11.4.0", 9],
];

describe("fleetgate supervisor --supervisor-version: the v2 endpoints", () => {
  const devices = new Map<string, SupervisorProcess>();
  const dirs: string[] = [];
  beforeAll(async () => {
    for (const [version] of BOUNDARIES) {
      const dir = tempDir();
      dirs.push(dir);
      devices.set(version, await unmanaged(dir, "--supervisor-version", version));
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all([...devices.values()].map((device) => device.stop()));
    for (const dir of dirs) removeDir(dir);
  });

  it.each(BOUNDARIES)("%s serves the first %i parts of v2 and nothing newer", async (version, parts) => {
    const call = client(devices.get(version) as SupervisorProcess);
    const present = async (method: string, path: string, body?: unknown) =>
      (await call(method, path, { body })).status !== 404;
    const all = async (checks: Promise<boolean>[]) => {
      const results = await Promise.all(checks);
      expect(new Set(results).size).toBe(1);
      return results[0] as boolean;
    };
    const probes: Record<(typeof PARTS)[number], boolean> = {
      actions: await all([
        // No service named: 400, so a 404 can only mean the route is missing.
        present("POST", "/v2/applications/1/stop-service", {}),
        present("POST", "/v2/applications/1/purge", { appId: 2 }),
      ]),
      appState: await all([
        present("GET", "/v2/applications/state"),
        present("GET", "/v2/applications/1/state"),
      ]),
      local: await all([
        present("GET", "/v2/version"),
        present("GET", "/v2/local/target-state"),
        present("GET", "/v2/local/device-info"),
      ]),
      containerId: await present("GET", "/v2/containerId"),
      stateStatus: await present("GET", "/v2/state/status"),
      deviceInfo: await all([present("GET", "/v2/device/name"), present("GET", "/v2/device/tags")]),
      cleanup: await present("GET", "/v2/cleanup-volumes"),
      journal: await present("POST", "/v2/journal-logs", { count: 1 }),
      vpn: await present("GET", "/v2/device/vpn"),
    };
    expect(PARTS.filter((part) => probes[part])).toEqual(PARTS.slice(0, parts));
  });

  // Before 8.2.2 only imageId names a service: serviceName alone is as good as nothing.
  it("reads serviceName from 8.2.2 on", async () => {
    for (const [version, status] of [
      ["7.21.0", 400],
      ["9.7.0", 200],
    ] as const) {
      const call = client(devices.get(version) as SupervisorProcess);
      const answer = await call("POST", "/v2/applications/1/start-service", {
        body: { serviceName: "main" },
      });
      expect(answer.status).toBe(status);
    }
  });

  // `format` came with 10.3: a 10.2 device streams journalctl's short format whatever is asked.
  it("reads the journal format from 10.3 on", async () => {
    const old = await client(devices.get("10.2.0") as SupervisorProcess)("POST", "/v2/journal-logs", {
      body: { count: 1, format: "json" },
    });
    expect(old.text).not.toMatch(/^\{/);
    const current = await client(devices.get("11.4.0") as SupervisorProcess)("POST", "/v2/journal-logs", {
      body: { count: 1, format: "json" },
    });
    expect(JSON.parse(current.text)).toHaveProperty("MESSAGE");
  });
});
