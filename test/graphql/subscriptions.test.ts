import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Result, type Subscription, subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startFleet, stopFleet } from "../support/supervisor/fleet.ts";

// Issue 23, item 4: live device and fleet state over SSE, on a real socket, from real simulated
// devices (`fleetgate fleet` processes) of two tenants. Each tenant sees its own devices go online,
// download and run a release, and go offline (the sweep, 3 s after they fall silent), and nothing
// of the other tenant's devices, which change in the same window.

interface Tenant {
  readonly token: string;
  readonly fleet: number;
  readonly provisioningKey: string;
}

interface DeviceEvent {
  deviceChanged: {
    uuid: string;
    isOnline: boolean;
    status: string | null;
    downloadProgress: number | null;
    isRunningRelease: { commit: string } | null;
  };
}
interface FleetEvent {
  fleetChanged: { id: number; appName: string; online: number };
}

const deviceFields = "uuid isOnline status downloadProgress isRunningRelease { commit }";
const onlineDevices = "online: ownsDeviceCount(where: { isOnline: { eq: true } })";

describe.each(databaseKinds)("GraphQL subscriptions on %s", (kind) => {
  let server: TestServer;
  let alice: Tenant;
  let bob: Tenant;
  const base = mkdtempSync(join(tmpdir(), `fleetgate-subscriptions-${kind}-`));
  const processes: ChildProcess[] = [];
  const streams: Subscription<unknown>[] = [];
  let closed = false;

  const send = (method: Method, url: string, payload?: unknown, token?: string) =>
    injectJson(server, method, url, payload, token ? { authorization: `Bearer ${token}` } : {});

  async function tenant(name: string): Promise<Tenant> {
    const password = `${name}-password`;
    const user = await send("POST", "/v6/user", { username: name, email: `${name}@example.com`, password });
    expect(user.status, user.raw).toBe(201);
    const login = await send("POST", "/login_", { username: name, password });
    expect(login.status, login.raw).toBe(200);
    const token = login.raw;
    const fleet = await send(
      "POST",
      "/v6/application",
      { app_name: `${name}-fleet`, device_type: "raspberrypi4-64" },
      token,
    );
    expect(fleet.status, fleet.raw).toBe(201);
    const id = (fleet.body as { id: number }).id;
    const key = await send("POST", `/api-key/application/${id}/provisioning`, undefined, token);
    expect(key.status, key.raw).toBe(200);
    return { token, fleet: id, provisioningKey: key.body as string };
  }

  async function open<T>(token: string, query: string, variables?: Record<string, unknown>) {
    const stream = await subscribe<T>(server.url, token, query, variables);
    streams.push(stream as Subscription<unknown>);
    return stream;
  }

  async function fleetOf(owner: Tenant, name: string) {
    const args = [
      ...["--api", server.url, "--provisioning-key", owner.provisioningKey, "--fleet", String(owner.fleet)],
      ...[
        "--devices",
        "1",
        "--data-dir",
        join(base, name),
        "--heartbeat-interval",
        "1",
        "--poll-interval",
        "1",
      ],
      ...["--download-ms", "5000", "--install-ms", "200"],
    ];
    const started = await startFleet(args, 1);
    processes.push(started.child);
    return { child: started.child, uuid: started.devices[0]?.uuid as string };
  }

  beforeAll(async () => {
    server = await startTestServer(kind, {
      DEVICE_OFFLINE_TIMEOUT: "3",
      // No command jobs here: their worker is load this test does not need.
      COMMAND_JOBS: "false",
    });
    await loadDefaultCatalogue(server.test.db);
    alice = await tenant("alice");
    bob = await tenant("bob");
  }, 120_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    for (const child of processes)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (!closed) await server?.close();
    rmSync(base, { recursive: true, force: true });
  }, 60_000);

  it("streams a tenant's devices going online, updating and going offline, and nothing of another tenant", {
    timeout: 240_000,
  }, async () => {
    const devices = await open<DeviceEvent>(
      alice.token,
      `subscription { deviceChanged { ${deviceFields} } }`,
    );
    const offline = await open<DeviceEvent>(
      alice.token,
      `subscription Offline($where: DeviceWhere) { deviceChanged(where: $where) { uuid isOnline } }`,
      { where: { isOnline: { eq: false } } },
    );
    const fleets = await open<FleetEvent>(
      alice.token,
      `subscription { fleetChanged { id appName ${onlineDevices} } }`,
    );
    const bobs = await open<DeviceEvent>(bob.token, `subscription { deviceChanged { ${deviceFields} } }`);
    // The admin reads every device: proof that the other tenant's changes did happen meanwhile.
    const everything = await open<DeviceEvent>(
      server.adminKey,
      `subscription { deviceChanged { uuid isOnline } }`,
    );

    const [mine, theirs] = await Promise.all([fleetOf(alice, "alice"), fleetOf(bob, "bob")]);
    const about =
      (uuid: string, match: (device: DeviceEvent["deviceChanged"]) => boolean) =>
      (result: Result<DeviceEvent>) =>
        result.data?.deviceChanged.uuid === uuid && match(result.data.deviceChanged);

    // Online.
    await devices.until(
      about(mine.uuid, (d) => d.isOnline),
      "alice's device online",
    );
    await fleets.until(
      (r) => r.data?.fleetChanged.id === alice.fleet && r.data.fleetChanged.online === 1,
      "alice's fleet with one device online",
    );
    await bobs.until(
      about(theirs.uuid, (d) => d.isOnline),
      "bob's device online, to bob",
    );
    await everything.until(
      about(theirs.uuid, (d) => d.isOnline),
      "bob's device online, to the admin",
    );

    // An update: a new target release is downloaded (with progress) and then runs.
    const commit = "5ab5c71b5ab5c71b5ab5c71b5ab5c71b";
    const release = await send(
      "POST",
      "/v6/release",
      { belongs_to__application: alice.fleet, commit, status: "success", source: "cloud" },
      alice.token,
    );
    expect(release.status, release.raw).toBe(201);
    const target = await send(
      "PATCH",
      `/v6/application(${alice.fleet})`,
      { should_be_running__release: (release.body as { id: number }).id, app_name: "alice-renamed" },
      alice.token,
    );
    expect(target.status, target.raw).toBe(200);
    await fleets.until((r) => r.data?.fleetChanged.appName === "alice-renamed", "alice's fleet renamed");
    await devices.until(
      about(mine.uuid, (d) => d.downloadProgress !== null),
      "download progress",
    );
    await devices.until(
      about(mine.uuid, (d) => d.isRunningRelease?.commit === commit),
      "the new release running",
    );

    // Offline: the device falls silent and the sweep marks it.
    expect(await stopFleet(mine.child)).toBe(0);
    await devices.until(
      about(mine.uuid, (d) => !d.isOnline),
      "alice's device offline",
    );
    await offline.until(
      about(mine.uuid, (d) => !d.isOnline),
      "alice's device offline, through the filter",
    );
    await fleets.until(
      (r) => r.data?.fleetChanged.id === alice.fleet && r.data.fleetChanged.online === 0,
      "alice's fleet with no device online",
    );

    // Bob's device kept reporting all along; alice heard nothing of it, and bob nothing of hers.
    for (const stream of [devices, offline, fleets, bobs] as Subscription<unknown>[])
      expect(stream.results.filter((r) => r.errors)).toEqual([]);
    expect(devices.results.every((r) => r.data?.deviceChanged.uuid === mine.uuid)).toBe(true);
    expect(bobs.results.every((r) => r.data?.deviceChanged.uuid === theirs.uuid)).toBe(true);
    expect(fleets.results.every((r) => r.data?.fleetChanged.id === alice.fleet)).toBe(true);
    // The filter let through only what matches it: no online event, at least the offline one.
    expect(offline.results.every((r) => r.data?.deviceChanged.isOnline === false)).toBe(true);
    // The download climbed in steps, each an event (the reads coalesce bursts, not distinct states).
    const progress = devices.results
      .map((r) => r.data?.deviceChanged.downloadProgress)
      .filter((p) => p !== null);
    expect(progress.length).toBeGreaterThan(0);
  });

  it("refuses a bad credential and an unreadable command job before streaming", {
    timeout: 60_000,
  }, async () => {
    // Refused with a 401 before a stream opens, as every route refuses an invalid credential.
    await expect(open<DeviceEvent>("not-a-key", "subscription { deviceChanged { uuid } }")).rejects.toThrow(
      /HTTP 401 .*UNAUTHENTICATED/,
    );
    const job = await open(alice.token, "subscription { commandJob(id: 999999) { id } }");
    const missing = await job.until((r) => r.errors !== undefined, "an error");
    expect(missing.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
  // Runs last: it closes the server.
  it("completes open subscriptions when the server closes, so closing does not wait on them", {
    timeout: 60_000,
  }, async () => {
    const open = await subscribe(server.url, alice.token, "subscription { fleetChanged { id } }");
    streams.push(open);
    await new Promise((resolve) => setTimeout(resolve, 200));
    closed = true;
    await server.close();
    await open.finished;
    expect(open.completed()).toBe(true);
  });
});
