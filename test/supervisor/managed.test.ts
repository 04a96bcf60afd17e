import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeCloud,
  PROVISIONING_KEY,
  startFakeCloud,
  USER_TOKEN,
} from "../support/supervisor/fake-cloud.ts";
import {
  client,
  FAST,
  removeDir,
  type SupervisorProcess,
  spawnSupervisor,
  tempDir,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// Managed mode against a fake cloud: registration (with a provisioning key, or with a
// user token that first creates one), state reports (at start, on change, heartbeat, at
// once on a new API key), the target poll and update cycle, the lock and `force`.

const REPORT_MEMBERS = [
  "status",
  "commit",
  "ip_address",
  "supervisor_address",
  "api_port",
  "api_key",
  "os_version",
  "os_variant",
  "supervisor_version",
  "download_progress",
  "provisioning_progress",
  "memory_usage",
  "memory_total",
  "storage_usage",
  "storage_total",
  "cpu_usage",
  "is_undervolted",
];

function managed(cloud: FakeCloud, dataDir: string, ...args: string[]): Promise<SupervisorProcess> {
  return spawnSupervisor(
    ["--api", cloud.url, "--fleet", String(cloud.fleet), "--port", "0", ...FAST, ...args],
    dataDir,
  );
}

const until = (check: () => boolean) => waitFor(async () => check(), Boolean);

describe("fleetgate supervisor --api: registration", () => {
  let cloud: FakeCloud;
  const dirs: string[] = [];
  const dir = () => {
    dirs.push(tempDir());
    return dirs.at(-1) as string;
  };
  beforeAll(async () => {
    cloud = await startFakeCloud();
  });
  afterAll(async () => {
    await cloud.close();
    for (const d of dirs) removeDir(d);
  });

  it("registers once with a provisioning key, and a restart reuses the registration", async () => {
    const dataDir = dir();
    const uuid = "0123456789abcdef0123456789abcdef";
    const device = await managed(
      cloud,
      dataDir,
      "--provisioning-key",
      PROVISIONING_KEY,
      "--uuid",
      uuid,
      "--device-type",
      "raspberrypi4-64",
    );
    expect(device.uuid).toBe(uuid);
    expect(cloud.registrations).toEqual([
      {
        authorization: `Bearer ${PROVISIONING_KEY}`,
        body: { application: cloud.fleet, uuid, device_type: "raspberrypi4-64" },
      },
    ]);
    await device.stop();
    const again = await managed(cloud, dataDir, "--provisioning-key", PROVISIONING_KEY);
    expect([again.uuid, again.apiKey]).toEqual([uuid, device.apiKey]);
    expect(cloud.registrations).toHaveLength(1);
    await again.stop();
  });

  it("with --token, creates a provisioning key first and registers with it", async () => {
    const device = await managed(cloud, dir(), "--token", USER_TOKEN);
    expect(cloud.provisioningCalls).toEqual([
      { fleet: String(cloud.fleet), authorization: `Bearer ${USER_TOKEN}` },
    ]);
    const registration = cloud.registrations.at(-1);
    expect(registration?.body).toEqual({ application: cloud.fleet, uuid: device.uuid });
    expect(registration?.authorization).not.toBe(`Bearer ${PROVISIONING_KEY}`);
    await device.stop();
  });

  it("gives up at once when the cloud refuses the key (exit 1, the reason on stderr)", async () => {
    await expect(managed(cloud, dir(), "--provisioning-key", "wrongKey")).rejects.toThrow(
      /exited with 1[\s\S]*device\/register: 401/,
    );
  });
});

describe("fleetgate supervisor --api: state reports and updates", () => {
  let cloud: FakeCloud;
  let device: SupervisorProcess;
  let call: ReturnType<typeof client>;
  const dataDir = tempDir();
  const deviceKey = () => cloud.reports[0]?.authorization;
  const lastReport = () => cloud.reports.at(-1)?.body ?? {};
  beforeAll(async () => {
    cloud = await startFakeCloud();
    device = await managed(
      cloud,
      dataDir,
      "--provisioning-key",
      PROVISIONING_KEY,
      "--heartbeat-interval",
      "0.3",
      "--poll-interval",
      "0.2",
      // Reports are debounced (200 ms): phases this long each show up in at least one.
      "--download-ms",
      "600",
      "--install-ms",
      "400",
    );
    call = client(device);
  });
  afterEach(() => {
    for (const file of ["updates.lock", "resin-updates.lock"]) rmSync(join(dataDir, file), { force: true });
  });
  afterAll(async () => {
    await device.stop();
    await cloud.close();
    removeDir(dataDir);
  });

  it("reports its state at start with the device's cloud key: every member of the contract", async () => {
    await until(() => cloud.reports.length > 0);
    const [first] = cloud.reports;
    expect(first?.authorization).toMatch(/^Bearer [0-9a-f]{32}$/);
    // Through PATCH /device/v3/state, as v17 reports (fake-cloud.ts reads it back in the v2 shape).
    expect(first?.api).toBe("v3");
    expect(Object.keys(first?.body ?? {}).sort()).toEqual([...REPORT_MEMBERS].sort());
    expect(first?.body).toMatchObject({
      status: "Idle",
      commit: null,
      supervisor_address: "127.0.0.1",
      api_port: device.port,
      api_key: device.apiKey,
      supervisor_version: "17.1.4",
      download_progress: null,
      is_undervolted: false,
    });
  });

  it("sends a heartbeat every --heartbeat-interval seconds without any change", async () => {
    const start = cloud.reports.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(cloud.reports.length - start).toBeGreaterThanOrEqual(2);
    expect(cloud.reports.length - start).toBeLessThanOrEqual(6);
    expect(new Set(cloud.reports.map((r) => r.authorization))).toEqual(new Set([deviceKey()]));
  });

  it("follows its target: Downloading with progress, Installing, then Idle on the new commit, all reported", async () => {
    const commit = "c".repeat(32);
    const from = cloud.reports.length;
    cloud.target = commit;
    await until(() => lastReport().commit === commit && lastReport().status === "Idle");
    const reports = cloud.reports.slice(from).map((r) => r.body);
    const statuses = [...new Set(reports.map((r) => r.status))];
    expect(statuses).toEqual(expect.arrayContaining(["Downloading", "Installing", "Idle"]));
    expect(statuses.indexOf("Downloading")).toBeLessThan(statuses.indexOf("Installing"));
    const progress = reports.filter((r) => r.status === "Downloading").map((r) => r.download_progress);
    expect(progress.some((p) => typeof p === "number")).toBe(true);
    expect(lastReport().download_progress).toBeNull();
    expect((await call("GET", "/v1/device")).json()).toMatchObject({
      commit,
      status: "Idle",
      update_pending: false,
    });
    const app = (await call("GET", "/v1/apps/42")).json() as { appId: number; commit: string };
    expect([app.appId, app.commit]).toEqual([42, commit]);
  });

  // docs/update-locking.md: "updates will still be downloaded by the Supervisor, ready to be
  // applied once the lockfile no longer exists"; /v1/device shows update_downloaded and, while
  // applying is refused, update_failed.
  it("downloads but does not apply while the lock is held (update_downloaded, update_failed); force overrides it", async () => {
    writeFileSync(join(dataDir, "updates.lock"), "");
    const commit = "d".repeat(32);
    cloud.target = commit;
    const polls = cloud.targetPolls.length;
    await until(() => cloud.targetPolls.length >= polls + 3);
    await waitFor(
      async () => (await call("GET", "/v1/device")).json() as Record<string, unknown>,
      (state) => state.update_failed === true,
    );
    expect((await call("GET", "/v1/device")).json()).toMatchObject({
      commit: "c".repeat(32),
      status: "Idle",
      update_pending: true,
      update_downloaded: true,
      update_failed: true,
    });
    expect(lastReport().commit).toBe("c".repeat(32));
    expect((await call("POST", "/v1/update", { body: { force: true } })).status).toBe(204);
    await until(() => lastReport().commit === commit && lastReport().status === "Idle");
    expect((await call("GET", "/v1/device")).json()).toMatchObject({
      update_downloaded: false,
      update_failed: false,
    });
    // The forced update took the lock away from the application.
    expect(existsSync(join(dataDir, "updates.lock"))).toBe(false);
  });

  it("honours the legacy resin-updates.lock as the real supervisor does", async () => {
    writeFileSync(join(dataDir, "resin-updates.lock"), "");
    const commit = "f".repeat(32);
    cloud.target = commit;
    await waitFor(
      async () => (await call("GET", "/v1/device")).json() as Record<string, unknown>,
      (state) => state.update_failed === true,
    );
    expect(lastReport().commit).toBe("d".repeat(32));
    rmSync(join(dataDir, "resin-updates.lock"));
    await until(() => lastReport().commit === commit && lastReport().status === "Idle");
    cloud.target = "d".repeat(32);
    await until(() => lastReport().commit === "d".repeat(32) && lastReport().status === "Idle");
  });

  it("updates once the lock is released", async () => {
    writeFileSync(join(dataDir, "updates.lock"), "");
    const commit = "e".repeat(32);
    cloud.target = commit;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(lastReport().commit).toBe("d".repeat(32));
    rmSync(join(dataDir, "updates.lock"));
    await until(() => lastReport().commit === commit && lastReport().status === "Idle");
  });

  it("reports a regenerated API key at once", async () => {
    const answer = await call("POST", "/v1/regenerate-api-key");
    const newKey = answer.text;
    const asked = Date.now();
    await until(() => lastReport().api_key === newKey);
    const report = cloud.reports.find((r) => r.body.api_key === newKey);
    // Well before the next heartbeat or debounce would have sent it.
    expect((report?.at ?? 0) - asked).toBeLessThan(250);
    call = client({ url: device.url, apiKey: newKey });
  });

  it("is unhealthy (500 Unhealthy) while the cloud fails its target polls, and healthy again after", async () => {
    cloud.failTargets = true;
    const unhealthy = await waitFor(
      () => call("GET", "/v1/healthy", { key: null }),
      (a) => a.status === 500,
    );
    expect(unhealthy.at(-1)?.text).toBe("Unhealthy");
    cloud.failTargets = false;
    await waitFor(
      () => call("GET", "/v1/healthy", { key: null }),
      (a) => a.status === 200,
    );
  });
});

describe("fleetgate supervisor --api: /v1/update polls at once", () => {
  it("learns a new target on /v1/update without waiting for the poll interval", async () => {
    const cloud = await startFakeCloud(7);
    const dataDir = tempDir();
    try {
      const device = await managed(cloud, dataDir, "--provisioning-key", PROVISIONING_KEY);
      await until(() => cloud.targetPolls.length === 1);
      cloud.target = "f".repeat(32);
      expect((await client(device)("POST", "/v1/update")).status).toBe(204);
      await until(() => cloud.reports.at(-1)?.body.commit === "f".repeat(32));
      expect(cloud.targetPolls).toHaveLength(2);
      await device.stop();
    } finally {
      await cloud.close();
      removeDir(dataDir);
    }
  });
});
