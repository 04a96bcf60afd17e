import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeCloud,
  FLEET_UUID,
  PROVISIONING_KEY,
  startFakeCloud,
} from "../support/supervisor/fake-cloud.ts";
import {
  FAST,
  removeDir,
  type SupervisorProcess,
  spawnSupervisor,
  tempDir,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// Where a managed device reports: PATCH /device/v3/state by default, as balena-supervisor v17
// does (api-binder's report: {<uuid>: {…, api_secret, apps: {<app uuid>: {release_uuid}}}}),
// or PATCH /device/v2/<uuid>/state with --state-api v2.

describe("fleetgate supervisor --api: the state endpoint", () => {
  let cloud: FakeCloud;
  const dirs = [tempDir(), tempDir()];
  const devices: SupervisorProcess[] = [];
  const start = (dir: string, ...args: string[]) =>
    spawnSupervisor(
      [
        ...["--api", cloud.url, "--fleet", String(cloud.fleet), "--port", "0", ...FAST],
        ...["--provisioning-key", PROVISIONING_KEY, "--heartbeat-interval", "0.3", "--poll-interval", "0.2"],
        ...args,
      ],
      dir,
    );
  const reportsOf = (device: SupervisorProcess) =>
    cloud.reports.filter((report) => report.body.api_key === device.apiKey);
  beforeAll(async () => {
    cloud = await startFakeCloud();
    cloud.target = "a".repeat(32);
    devices.push(await start(dirs[0] as string), await start(dirs[1] as string, "--state-api", "v2"));
  });
  afterAll(async () => {
    await Promise.all(devices.map((device) => device.stop()));
    await cloud.close();
    for (const dir of dirs) removeDir(dir);
  });

  it("reports through v3 by default: keyed by uuid, api_secret, the running commit as the fleet's release_uuid", async () => {
    const [device] = devices as [SupervisorProcess];
    await waitFor(
      async () => reportsOf(device).at(-1),
      (report) => report?.body.commit === "a".repeat(32) && report.body.status === "Idle",
      20_000,
    );
    const reports = reportsOf(device);
    expect(new Set(reports.map((report) => report.api))).toEqual(new Set(["v3"]));
    const raw = reports.at(-1)?.raw as Record<string, Record<string, unknown>>;
    expect(Object.keys(raw)).toEqual([device.uuid]);
    expect(raw[device.uuid]).toMatchObject({
      api_secret: device.apiKey,
      status: "Idle",
      supervisor_version: "17.1.4",
      apps: { [FLEET_UUID]: { release_uuid: "a".repeat(32) } },
    });
    expect(raw[device.uuid]).not.toHaveProperty("api_key");
    expect(raw[device.uuid]).not.toHaveProperty("commit");
  });

  it("reports through v2 with --state-api v2", async () => {
    const device = devices[1] as SupervisorProcess;
    await waitFor(
      async () => reportsOf(device).at(-1),
      (report) => report?.body.commit === "a".repeat(32) && report.body.status === "Idle",
      20_000,
    );
    const reports = reportsOf(device);
    expect(new Set(reports.map((report) => report.api))).toEqual(new Set(["v2"]));
    expect(reports.at(-1)?.raw).toMatchObject({ api_key: device.apiKey, commit: "a".repeat(32) });
  });
});
