import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { client, unmanagedDevice, waitFor } from "../support/supervisor/supervisor-process.ts";

// The v2 device API against a real `fleetgate supervisor`, checked against balena-supervisor's
// device-api/v2.ts and actions.ts: statuses, bodies and the update lock for each endpoint.

const LOCKED = { status: "failed", message: "Lockfile exists for { appId: 1, service: main }" };
const NO_SERVICE =
  "serviceName or imageId parameters were not provided or the app is multi-container. Use the v2 service action endpoints.";
const APP_NOT_FOUND =
  "App not found: an app needs to be installed for this endpoint to work.\n" +
  "\tIf you've recently moved this device from another app,\n" +
  "\tplease push an app and wait for it to be installed first.";

type StateStatus = {
  status: string;
  appState: string;
  containers: { status: string; serviceName: string; containerId: string; imageId: number }[];
  images: { name: string; status: string; imageId: number }[];
  release: string;
};

describe("fleetgate supervisor --unmanaged: the v2 application endpoints", () => {
  const { dir, call } = unmanagedDevice();
  const lock = () => writeFileSync(join(dir, "updates.lock"), "");
  const containerId = async () =>
    ((await call("GET", "/v2/containerId")).json() as { services: { main: string } }).services.main;
  const serviceStatus = async () =>
    ((await call("GET", "/v2/state/status")).json() as StateStatus).containers[0]?.status;
  afterEach(() => rmSync(join(dir, "updates.lock"), { force: true }));

  // handleServiceAction: executeServiceAction, then 200 `OK`; restart recreates the container.
  it("restart-service, stop-service and start-service by serviceName or imageId: 200 OK", async () => {
    const before = await containerId();
    const restarted = await call("POST", "/v2/applications/1/restart-service", {
      body: { serviceName: "main" },
    });
    expect([restarted.status, restarted.text]).toEqual([200, "OK"]);
    expect(await containerId()).not.toBe(before);
    const { imageId } = ((await call("GET", "/v2/state/status")).json() as StateStatus).containers[0] ?? {};
    const stopped = await call("POST", "/v2/applications/1/stop-service", { body: { imageId } });
    expect([stopped.status, stopped.text]).toEqual([200, "OK"]);
    expect(await serviceStatus()).toBe("exited");
    const started = await call("POST", "/v2/applications/1/start-service", { body: { serviceName: "main" } });
    expect([started.status, started.text]).toEqual([200, "OK"]);
    expect(await serviceStatus()).toBe("Running");
  });

  it("refuses a bad app id (400 JSON), another app (401 JSON), no service (400 text), an unknown one (404 text)", async () => {
    const invalid = await call("POST", "/v2/applications/abc/stop-service", {
      body: { serviceName: "main" },
    });
    expect([invalid.status, invalid.json()]).toEqual([400, { status: "failed", message: "Invalid app id" }]);
    const other = await call("POST", "/v2/applications/2/stop-service", { body: { serviceName: "main" } });
    expect([other.status, other.json()]).toEqual([401, { status: "failed", message: "Unauthorized" }]);
    const none = await call("POST", "/v2/applications/1/stop-service", { body: {} });
    expect([none.status, none.text]).toEqual([400, NO_SERVICE]);
    const unknown = await call("POST", "/v2/applications/1/stop-service", { body: { serviceName: "db" } });
    expect([unknown.status, unknown.text]).toEqual([
      404,
      "Service not found, a container must exist for this endpoint to work",
    ]);
  });

  // executeServiceActionWithLock takes the lock for every action, start included; force removes it.
  it("takes the update lock for every service action (423 JSON) unless forced", async () => {
    for (const action of ["restart-service", "stop-service", "start-service"]) {
      lock();
      const locked = await call("POST", `/v2/applications/1/${action}`, { body: { serviceName: "main" } });
      expect([locked.status, locked.json()]).toEqual([423, LOCKED]);
      const forced = await call("POST", `/v2/applications/1/${action}`, {
        body: { serviceName: "main", force: true },
      });
      expect(forced.status).toBe(200);
      expect(existsSync(join(dir, "updates.lock"))).toBe(false);
    }
  });

  it("purges and restarts the app: 200 OK; Missing app id (400 JSON), another app (401 JSON), locked (423 JSON)", async () => {
    const folder = join(dir, "apps", "1", "data");
    writeFileSync(join(folder, "file.txt"), "data");
    const purged = await call("POST", "/v2/applications/1/purge");
    expect([purged.status, purged.text]).toEqual([200, "OK"]);
    expect(existsSync(join(folder, "file.txt"))).toBe(false);
    const before = await containerId();
    const restarted = await call("POST", "/v2/applications/1/restart", { body: { force: "1" } });
    expect([restarted.status, restarted.text]).toEqual([200, "OK"]);
    expect(await containerId()).not.toBe(before);
    for (const action of ["purge", "restart"]) {
      const missing = await call("POST", `/v2/applications/x/${action}`);
      expect([missing.status, missing.json()]).toEqual([
        400,
        { status: "failed", message: "Missing app id" },
      ]);
      const other = await call("POST", `/v2/applications/7/${action}`);
      expect([other.status, other.json()]).toEqual([401, { status: "failed", message: "Unauthorized" }]);
      lock();
      const locked = await call("POST", `/v2/applications/1/${action}`);
      expect([locked.status, locked.json()]).toEqual([423, LOCKED]);
    }
  });

  it("GET /v2/applications/state: by app name, each service by name with status, releaseId, downloadProgress", async () => {
    const device = (await call("GET", "/v1/device")).json() as { commit: string };
    expect((await call("GET", "/v2/applications/state")).json()).toEqual({
      app1: {
        appId: 1,
        commit: device.commit,
        services: { main: { status: "Running", releaseId: expect.any(Number), downloadProgress: null } },
      },
    });
  });

  it("GET /v2/applications/:appId/state: {commit, local, dependent}; 400 for a bad id, 409 for another app", async () => {
    const answer = (await call("GET", "/v2/applications/1/state")).json() as {
      commit: string;
      local: Record<string, { services: Record<string, { status: string; download_progress: null }> }>;
      dependent: object;
    };
    expect(Object.keys(answer.local)).toEqual(["1"]);
    expect(Object.values(answer.local["1"]?.services ?? {})).toEqual([
      { status: "Running", releaseId: expect.any(Number), download_progress: null },
    ]);
    expect(answer.dependent).toEqual({});
    const bad = await call("GET", "/v2/applications/abc/state");
    expect([bad.status, bad.json()]).toEqual([
      400,
      { status: "failed", message: "Invalid application ID: abc" },
    ]);
    const other = await call("GET", "/v2/applications/5/state");
    expect([other.status, other.json()]).toEqual([
      409,
      { status: "failed", message: "Application ID does not exist: 5" },
    ]);
  });
});

describe("fleetgate supervisor --unmanaged: the v2 device endpoints", () => {
  const { dir, device, call } = unmanagedDevice();

  it("GET /v2/version, /v2/device/name, /v2/local/target-state and /v2/local/device-info (answered outside local mode)", async () => {
    expect((await call("GET", "/v2/version")).json()).toEqual({ status: "success", version: "17.1.4" });
    expect((await call("GET", "/v2/device/name")).json()).toEqual({
      status: "success",
      deviceName: device.uuid.slice(0, 7),
    });
    const target = (await call("GET", "/v2/local/target-state")).json() as { status: string; state: object };
    expect(target).toMatchObject({ status: "success", state: { local: { apps: {} } } });
    expect((await call("GET", "/v2/local/device-info")).json()).toEqual({
      status: "success",
      info: { arch: "amd64", deviceType: "generic-amd64" },
    });
  });

  it("GET /v2/containerId: every service, one by ?service= or ?serviceName=, 503 for an unknown one", async () => {
    const all = (await call("GET", "/v2/containerId")).json() as { services: { main: string } };
    expect(all.services.main).toMatch(/^[0-9a-f]{64}$/);
    for (const query of ["service=main", "serviceName=main"]) {
      expect((await call("GET", `/v2/containerId?${query}`)).json()).toEqual({
        status: "success",
        containerId: all.services.main,
      });
    }
    const unknown = await call("GET", "/v2/containerId?service=db");
    expect([unknown.status, unknown.json()]).toEqual([
      503,
      { status: "failed", message: "Could not find service with that name" },
    ]);
  });

  it("GET /v2/state/status: appState, containers, images and the release", async () => {
    const state = (await call("GET", "/v2/state/status")).json() as StateStatus;
    const commit = ((await call("GET", "/v1/device")).json() as { commit: string }).commit;
    expect(state).toMatchObject({
      status: "success",
      appState: "applied",
      overallDownloadProgress: null,
      release: commit,
    });
    expect(state.containers).toEqual([
      {
        status: "Running",
        serviceName: "main",
        appId: 1,
        imageId: expect.any(Number),
        serviceId: expect.any(Number),
        containerId: expect.stringMatching(/^[0-9a-f]{64}$/),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    expect(state.images).toEqual([
      expect.objectContaining({ serviceName: "main", status: "Downloaded", downloadProgress: null }),
    ]);
  });

  // fetchDeviceTags needs the cloud: without one the real endpoint answers 500 {status: failed}.
  it("GET /v2/device/tags without a cloud: 500; GET /v2/device/vpn: disabled and disconnected", async () => {
    const tags = await call("GET", "/v2/device/tags");
    expect([tags.status, tags.json()]).toEqual([
      500,
      { status: "failed", message: "Attempt to communicate with API, without initialized client" },
    ]);
    expect((await call("GET", "/v2/device/vpn")).json()).toEqual({
      status: "success",
      vpn: { enabled: false, connected: false },
    });
  });

  it("GET /v2/cleanup-volumes removes the volumes of apps the device does not run", async () => {
    mkdirSync(join(dir, "apps", "99", "data"), { recursive: true });
    expect((await call("GET", "/v2/cleanup-volumes")).json()).toEqual({ status: "success" });
    expect(existsSync(join(dir, "apps", "99"))).toBe(false);
    expect(existsSync(join(dir, "apps", "1", "data"))).toBe(true);
  });

  // The real endpoint pipes journalctl: short lines by default, -o json, --lines, --follow.
  it("POST /v2/journal-logs streams journal lines: count, format json, follow", async () => {
    const short = await call("POST", "/v2/journal-logs", { body: { count: 2 } });
    expect(short.status).toBe(200);
    const lines = short.text.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ balena-supervisor\[\d+\]: \[api\] {5}\w+ \//,
    );
    const json = await call("POST", "/v2/journal-logs", { body: { count: 1, format: "json" } });
    expect(JSON.parse(json.text)).toMatchObject({
      _SYSTEMD_UNIT: "balena-supervisor.service",
      MESSAGE: expect.stringMatching(/^\[api\]/),
    });

    const controller = new AbortController();
    const url = new URL("/v2/journal-logs", device.url);
    url.searchParams.set("apikey", device.apiKey);
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ follow: true, count: 1 }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = "";
    await reader.read().then(({ value }) => {
      received += new TextDecoder().decode(value);
    });
    await call("GET", "/v2/version");
    await waitFor(
      async () => {
        const { value } = await reader.read();
        received += new TextDecoder().decode(value);
        return received;
      },
      (text) => text.includes("GET /v2/version 200"),
    );
    controller.abort();
  });
});

describe("fleetgate supervisor --unmanaged --services 0: the v2 endpoints without an app", () => {
  const { device } = unmanagedDevice("--services", "0");

  it("service actions 404 App not found, restart and purge 503 not in the current state, empty states", async () => {
    const call = client(device);
    const action = await call("POST", "/v2/applications/1/restart-service", {
      body: { serviceName: "main" },
    });
    expect([action.status, action.text]).toEqual([404, APP_NOT_FOUND]);
    for (const path of ["/v2/applications/1/restart", "/v2/applications/1/purge"]) {
      const answer = await call("POST", path);
      expect([answer.status, answer.json()]).toEqual([
        503,
        { status: "failed", message: "Application with ID 1 is not in the current state" },
      ]);
    }
    expect((await call("GET", "/v2/applications/state")).json()).toEqual({});
    expect((await call("GET", "/v2/containerId")).json()).toEqual({ status: "success", services: {} });
  });
});
