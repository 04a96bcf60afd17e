import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  client,
  removeDir,
  type SupervisorProcess,
  tempDir,
  unmanaged,
  unmanagedDevice,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// The endpoints that act on the application: /v1/restart, /v1/purge, /v1/apps/:appId
// (GET, stop, start), with the update lock, `force`, and the single-container rule.

const LOCKED = { status: "failed", message: "Lockfile exists for { appId: 1, service: main }" };
const APP_NOT_FOUND =
  "App not found: an app needs to be installed for this endpoint to work.\n" +
  "\tIf you've recently moved this device from another app,\n" +
  "\tplease push an app and wait for it to be installed first.";
const MULTI_CONTAINER =
  "serviceName or imageId parameters were not provided or the app is multi-container. " +
  "Use the v2 service action endpoints.";

type App = { appId: number; commit: string; imageId: string; containerId: string };

describe("fleetgate supervisor --unmanaged: application endpoints", () => {
  // Steps long enough for the status poll to see each phase on a loaded machine (60 ms were missed).
  const { dir, device, call } = unmanagedDevice("--step-ms", "400");
  const lock = () => writeFileSync(join(dir, "updates.lock"), "");
  const app = async () => (await call("GET", "/v1/apps/1")).json() as App;
  // Whether the container runs: the real v1 says it in /v1/device's status only.
  const status = async () => ((await call("GET", "/v1/device")).json() as { status: string }).status;
  const statusesDuring = async (work: Promise<unknown>) => {
    let finished = false;
    void work.finally(() => {
      finished = true;
    });
    const seen = await waitFor(
      async () => ((await call("GET", "/v1/device")).json() as { status: string }).status,
      () => finished,
    );
    await work;
    return [...new Set(seen)];
  };

  afterEach(() => rmSync(join(dir, "updates.lock"), { force: true }));

  // The real v1 answer: imageId is the image's name (a string), releaseId is there, and env
  // holds the service defaults (compose/service.ts) minus the private keys.
  it("GET /v1/apps/:appId: {appId, commit, imageId, releaseId, containerId, env}", async () => {
    const answer = await call("GET", "/v1/apps/1");
    expect(answer.status).toBe(200);
    // Exactly the real supervisor's members (device-api/v1.ts), nothing of fleetgate's own.
    expect(Object.keys(answer.json() as object).sort()).toEqual([
      "appId",
      "commit",
      "containerId",
      "env",
      "imageId",
      "releaseId",
    ]);
    const state = (await call("GET", "/v1/device")).json() as { commit: string };
    // As balena-supervisor's privateAppEnvVars: the app's own supervisor key is left out of the
    // answer, which anyone who may read the device through the cloud's proxy sees.
    expect(answer.json()).toEqual({
      appId: 1,
      commit: state.commit,
      imageId: expect.stringMatching(/^registry\.fleetgate\.local\/v2\/[0-9a-f]{32}@sha256:[0-9a-f]{64}$/),
      releaseId: expect.any(Number),
      containerId: expect.stringMatching(/^[0-9a-f]{64}$/),
      env: {
        PLATFORM_APP_ID: "1",
        PLATFORM_APP_LOCK_PATH: join(dir, "updates.lock"),
        PLATFORM_SERVICE_NAME: "main",
        PLATFORM_DEVICE_UUID: device.uuid,
        PLATFORM_SUPERVISOR_ADDRESS: `http://127.0.0.1:${device.port}`,
        PLATFORM_SUPERVISOR_PORT: String(device.port),
      },
    });
    expect(answer.text).not.toContain(device.apiKey);
    // The application itself still runs with it.
    const appEnv = JSON.parse(readFileSync(join(dir, "apps", "1", "env.json"), "utf8"));
    expect(appEnv.PLATFORM_SUPERVISOR_API_KEY).toBe(device.apiKey);
    expect([(await call("GET", "/v1/apps/abc")).status, (await call("GET", "/v1/apps/abc")).text]).toEqual([
      400,
      "Missing app id",
    ]);
    const other = await call("GET", "/v1/apps/2");
    expect([other.status, other.text]).toEqual([400, "App not found"]);
  });

  it("restarts: 200 OK after Stopping and Starting, with a new container", async () => {
    const before = await app();
    let answer: Awaited<ReturnType<typeof call>> | undefined;
    const statuses = await statusesDuring(
      call("POST", "/v1/restart", { body: { appId: 1 } }).then((a) => {
        answer = a;
      }),
    );
    expect([answer?.status, answer?.text]).toEqual([200, "OK"]);
    expect(statuses).toEqual(expect.arrayContaining(["Stopping", "Starting"]));
    expect(((await call("GET", "/v1/device")).json() as { status: string }).status).toBe("Idle");
    expect((await app()).containerId).not.toBe(before.containerId);
    // The app id may come as digits, as the SDK's proxy calls send it.
    expect((await call("POST", "/v1/restart", { body: { appId: "1" } })).status).toBe(200);
  });

  it("refuses a restart without an app id (400), for another app (401 JSON), and while locked (423 JSON)", async () => {
    for (const body of [{}, { appId: "x" }, { appId: 0 }, undefined]) {
      const answer = await call("POST", "/v1/restart", { body });
      expect([answer.status, answer.text]).toEqual([400, "Missing app id"]);
    }
    const other = await call("POST", "/v1/restart", { body: { appId: 2 } });
    expect([other.status, other.json()]).toEqual([401, { status: "failed", message: "Unauthorized" }]);
    lock();
    const locked = await call("POST", "/v1/restart", { body: { appId: 1 } });
    expect([locked.status, locked.json()]).toEqual([423, LOCKED]);
  });

  // lib/validation.ts checkTruthy lower-cases a string first; a forced action deletes the lock
  // files (update-lock's force), so the lock is taken again before each try.
  it("`force` is on for true, 'true', 'TRUE', 1, '1', 'on' and 'On' only; a forced action removes the lock", async () => {
    for (const force of [true, "true", "TRUE", 1, "1", "on", "On"]) {
      lock();
      expect((await call("POST", "/v1/restart", { body: { appId: 1, force } })).status).toBe(200);
      expect(existsSync(join(dir, "updates.lock"))).toBe(false);
      expect((await call("POST", "/v1/restart", { body: { appId: 1 } })).status).toBe(200);
    }
    lock();
    for (const force of [false, "false", 0, "yes", null]) {
      expect((await call("POST", "/v1/restart", { body: { appId: 1, force } })).status).toBe(423);
    }
  });

  // checkInt accepts numerals with trailing zero decimals: "1.0" is app 1, "1.5" is no id.
  it("reads appId '1.0' as 1 and refuses '1.5'", async () => {
    expect((await call("POST", "/v1/restart", { body: { appId: "1.0" } })).status).toBe(200);
    const half = await call("POST", "/v1/restart", { body: { appId: "1.5" } });
    expect([half.status, half.text]).toEqual([400, "Missing app id"]);
    expect((await call("GET", "/v1/apps/1.0")).json()).toMatchObject({ appId: 1 });
  });

  it("purges: clears the application's data folder, 200 {Data: OK, Error: ''}", async () => {
    const folder = join(dir, "apps", "1", "data");
    mkdirSync(join(folder, "nested"), { recursive: true });
    writeFileSync(join(folder, "nested", "file.txt"), "data");
    const answer = await call("POST", "/v1/purge", { body: { appId: 1 } });
    expect([answer.status, answer.json()]).toEqual([200, { Data: "OK", Error: "" }]);
    expect(existsSync(join(folder, "nested"))).toBe(false);
    expect(existsSync(folder)).toBe(true);
  });

  it("refuses a purge without appId (400 text), for another app (401 JSON), and while locked unless forced", async () => {
    const missing = await call("POST", "/v1/purge", { body: {} });
    expect([missing.status, missing.text]).toEqual([400, "Invalid or missing appId"]);
    const other = await call("POST", "/v1/purge", { body: { appId: 7 } });
    expect([other.status, other.json()]).toEqual([401, { status: "failed", message: "Unauthorized" }]);
    lock();
    const locked = await call("POST", "/v1/purge", { body: { appId: 1 } });
    expect([locked.status, locked.json()]).toEqual([423, LOCKED]);
    expect((await call("POST", "/v1/purge", { body: { appId: 1, force: "1" } })).status).toBe(200);
  });

  it("stops and starts the application: 200 {containerId}, the container kept", async () => {
    const { containerId } = await app();
    const stopped = await call("POST", "/v1/apps/1/stop");
    expect([stopped.status, stopped.json()]).toEqual([200, { containerId }]);
    // The real /v1/device reports the stopped container's status, `exited`, not Idle.
    expect(await status()).toBe("exited");
    const started = await call("POST", "/v1/apps/1/start");
    expect([started.status, started.json()]).toEqual([200, { containerId }]);
    expect(await status()).toBe("Idle");
  });

  it("stop respects the lock unless forced (423 JSON); start takes no lock", async () => {
    lock();
    const locked = await call("POST", "/v1/apps/1/stop");
    expect([locked.status, locked.json()]).toEqual([423, LOCKED]);
    expect(await status()).toBe("Idle");
    expect((await call("POST", "/v1/apps/1/stop", { body: { force: "on" } })).status).toBe(200);
    expect(await status()).toBe("exited");
    expect((await call("POST", "/v1/apps/1/start")).status).toBe(200);
    expect(await status()).toBe("Idle");
  });

  it("refuses stop/start for a non-numeric app id (400) and for another app (401 text)", async () => {
    for (const action of ["stop", "start"]) {
      const invalid = await call("POST", `/v1/apps/abc/${action}`);
      expect([invalid.status, invalid.text]).toEqual([400, "Invalid app id"]);
      const other = await call("POST", `/v1/apps/2/${action}`);
      expect([other.status, other.text]).toEqual([401, "Unauthorized"]);
    }
  });

  it("a stop is temporary: a reboot starts the application again", async () => {
    expect((await call("POST", "/v1/apps/1/stop")).status).toBe(200);
    expect((await call("POST", "/v1/reboot")).status).toBe(202);
    await waitFor(status, (s) => s === "Idle");
  });
});

describe("fleetgate supervisor --unmanaged: stop survives no restart", () => {
  it("a supervisor restart starts a stopped application again", async () => {
    const dir = tempDir();
    try {
      const first = await unmanaged(dir);
      const before = (await client(first)("GET", "/v1/apps/1")).json() as App;
      expect((await client(first)("POST", "/v1/apps/1/stop")).status).toBe(200);
      await first.stop();
      const second = await unmanaged(dir);
      const app = (await client(second)("GET", "/v1/apps/1")).json() as App;
      await waitFor(
        async () => ((await client(second)("GET", "/v1/device")).json() as { status: string }).status,
        (status) => status === "Idle",
      );
      // The engine keeps its containers across a supervisor restart: same container id.
      expect(app.containerId).toBe(before.containerId);
      await second.stop();
    } finally {
      removeDir(dir);
    }
  });
});

describe("fleetgate supervisor --unmanaged: the v1 app endpoints need one service", () => {
  const dirs = [tempDir(), tempDir()];
  let multi: SupervisorProcess;
  let none: SupervisorProcess;
  beforeAll(async () => {
    [multi, none] = await Promise.all([
      unmanaged(dirs[0] as string, "--services", "2", "--app-id", "5"),
      unmanaged(dirs[1] as string, "--services", "0"),
    ]);
  });
  afterAll(async () => {
    await Promise.all([multi.stop(), none.stop()]);
    for (const dir of dirs) removeDir(dir);
  });

  it("a multi-container device answers 400 and points at the v2 endpoints", async () => {
    const call = client(multi);
    for (const action of ["stop", "start"]) {
      const answer = await call("POST", `/v1/apps/5/${action}`);
      expect([answer.status, answer.text]).toEqual([400, MULTI_CONTAINER]);
    }
    const get = await call("GET", "/v1/apps/5");
    expect([get.status, get.text]).toEqual([
      400,
      "Some v1 endpoints are only allowed on single-container apps",
    ]);
    // Restart and purge act on the whole application and still work.
    expect((await call("POST", "/v1/restart", { body: { appId: 5 } })).status).toBe(200);
  });

  it("a device without an installed service answers 400 App not found", async () => {
    const call = client(none);
    const stop = await call("POST", "/v1/apps/1/stop");
    expect([stop.status, stop.text]).toEqual([400, APP_NOT_FOUND]);
    const get = await call("GET", "/v1/apps/1");
    expect([get.status, get.text]).toEqual([400, "App not found"]);
    // With no app installed the real /v1/device has neither status nor download_progress.
    const state = (await call("GET", "/v1/device")).json() as object;
    expect(state).not.toHaveProperty("status");
    expect(state).not.toHaveProperty("download_progress");
  });
});
