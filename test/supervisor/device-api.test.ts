import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  client,
  KEY,
  removeDir,
  spawnSupervisor,
  tempDir,
  unmanagedDevice,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// The device-wide endpoints of a real unmanaged supervisor: auth, /ping, /v1/healthy,
// /v1/blink, /v1/device, /v1/regenerate-api-key, /v1/update and the error middleware.

describe("fleetgate supervisor --unmanaged: device endpoints", () => {
  const { dir, device } = unmanagedDevice();
  let call = client(device);

  it("prints its uuid, port and key once it listens", () => {
    expect(device.uuid).toMatch(/^[0-9a-f]{32}$/);
    expect(device.port).toBeGreaterThan(0);
    expect(device.apiKey).toBe(KEY);
  });

  it("answers /ping and /v1/healthy without a key", async () => {
    const ping = await call("GET", "/ping", { key: null });
    expect([ping.status, ping.text]).toEqual([200, "OK"]);
    const healthy = await call("GET", "/v1/healthy", { key: null });
    // The real one answers res.sendStatus(200), whose body is `OK`.
    expect([healthy.status, healthy.text]).toEqual([200, "OK"]);
  });

  it("refuses every other endpoint without the right key: 401 text Unauthorized", async () => {
    for (const key of [null, "wrongKey", `${KEY}x`]) {
      for (const [method, path] of [
        ["GET", "/v1/device"],
        ["POST", "/v1/blink"],
        ["POST", "/v1/reboot"],
        ["GET", "/v1/no-such-endpoint"],
      ] as const) {
        const answer = await call(method, path, { key });
        expect([answer.status, answer.text, answer.type]).toEqual([
          401,
          "Unauthorized",
          "text/plain; charset=utf-8",
        ]);
      }
    }
  });

  it("takes the key as ?apikey=, as Authorization: Bearer and as Authorization: ApiKey", async () => {
    for (const headers of [{ authorization: `Bearer ${KEY}` }, { authorization: `ApiKey ${KEY}` }]) {
      expect((await call("GET", "/v1/device", { key: null, headers })).status).toBe(200);
    }
    const wrong = await call("GET", "/v1/device", { key: null, headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
  });

  it("answers an unknown path with 404 once the key is right", async () => {
    const answer = await call("GET", "/v1/no-such-endpoint");
    expect([answer.status, answer.text]).toEqual([404, "Cannot GET /v1/no-such-endpoint"]);
    expect((await call("GET", "/v1/blink")).status).toBe(404);
  });

  it("answers malformed JSON with 503 JSON {status: failed, message}, as the real supervisor", async () => {
    const answer = await call("POST", "/v1/update", { body: "{not json" });
    expect(answer.status).toBe(503);
    expect(answer.json()).toEqual({ status: "failed", message: expect.any(String) });
  });

  it("reports the device state at GET /v1/device", async () => {
    const answer = await call("GET", "/v1/device");
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({
      api_port: device.port,
      commit: expect.stringMatching(/^[0-9a-f]{32}$/),
      ip_address: expect.any(String),
      mac_address: expect.toSatisfy((v) => v === null || typeof v === "string"),
      status: "Idle",
      download_progress: null,
      os_version: expect.stringMatching(/^balenaOS /),
      os_variant: "prod",
      supervisor_version: "17.1.4",
      update_pending: false,
      update_downloaded: false,
      update_failed: false,
      blinking: false,
    });
  });

  it("blinks: 200 OK, and `blinking` is true for the blink time (--blink-ms), then false", async () => {
    const answer = await call("POST", "/v1/blink");
    expect([answer.status, answer.text]).toEqual([200, "OK"]);
    const state = async () => (await call("GET", "/v1/device")).json() as { blinking: boolean };
    expect((await state()).blinking).toBe(true);
    await waitFor(state, (s) => !s.blinking);
  });

  it("regenerates its key: the new key as text, the old one refused at once, the app keeps the old one until it restarts", async () => {
    // The application's environment, as its container engine would show it.
    const appEnv = () =>
      JSON.parse(readFileSync(join(dir, "apps", "1", "env.json"), "utf8")) as Record<string, string>;
    expect(appEnv().PLATFORM_SUPERVISOR_API_KEY).toBe(KEY);
    const answer = await call("POST", "/v1/regenerate-api-key");
    expect(answer.status).toBe(200);
    const newKey = answer.text;
    expect(newKey).toMatch(/^\w{16,}$/);
    expect(newKey).not.toBe(KEY);
    expect((await call("GET", "/v1/device")).status).toBe(401);
    const next = client({ url: device.url, apiKey: newKey });
    expect((await next("GET", "/v1/device")).status).toBe(200);
    expect(appEnv().PLATFORM_SUPERVISOR_API_KEY).toBe(KEY);
    expect((await next("POST", "/v1/restart", { body: { appId: 1 } })).status).toBe(200);
    expect(appEnv()).toEqual({
      PLATFORM_APP_ID: "1",
      PLATFORM_APP_LOCK_PATH: join(dir, "updates.lock"),
      PLATFORM_SERVICE_NAME: "main",
      PLATFORM_DEVICE_UUID: device.uuid,
      PLATFORM_SUPERVISOR_ADDRESS: `http://127.0.0.1:${device.port}`,
      PLATFORM_SUPERVISOR_API_KEY: newKey,
      PLATFORM_SUPERVISOR_PORT: String(device.port),
    });
    // Only its owner may read it.
    expect(statSync(join(dir, "apps", "1", "env.json")).mode & 0o077).toBe(0);
    expect(statSync(join(dir, "supervisor.json")).mode & 0o077).toBe(0);
    // Later tests in this file use the new key.
    call = next;
  });

  it("updates on /v1/update (204): Downloading with rising progress, Installing, then Idle on the target commit", async () => {
    const commit = "a".repeat(32);
    writeFileSync(join(dir, "target.json"), JSON.stringify({ commit }));
    const answer = await call("POST", "/v1/update");
    expect([answer.status, answer.text]).toEqual([204, ""]);
    type State = {
      status: string;
      commit: string;
      download_progress: number | null;
      update_pending: boolean;
    };
    const seen = await waitFor(
      async () => (await call("GET", "/v1/device")).json() as State,
      (s) => s.commit === commit && s.status === "Idle",
    );
    // The phases in order, each once (the poll may not have answered yet at the first look).
    const phases = seen.map((s) => s.status).filter((status, i, all) => status !== all[i - 1]);
    expect(phases.slice(phases.indexOf("Downloading"))).toEqual(["Downloading", "Installing", "Idle"]);
    const progress = seen.map((s) => s.download_progress).filter((p) => p !== null);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress).toEqual([...progress].sort((a, b) => (a as number) - (b as number)));
    expect(seen.filter((s) => s.status === "Downloading").every((s) => s.update_pending)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ download_progress: null, update_pending: false });
  });

  it("waits for the update lock before updating; force overrides it", async () => {
    const commit = "b".repeat(32);
    writeFileSync(join(dir, "updates.lock"), "");
    writeFileSync(join(dir, "target.json"), JSON.stringify({ commit }));
    expect((await call("POST", "/v1/update")).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Downloaded while locked, but not applied (docs/update-locking.md).
    await waitFor(
      async () => (await call("GET", "/v1/device")).json() as Record<string, unknown>,
      (s) => s.update_failed === true,
    );
    const waiting = (await call("GET", "/v1/device")).json();
    expect(waiting).toMatchObject({
      status: "Idle",
      update_pending: true,
      update_downloaded: true,
      commit: "a".repeat(32),
    });
    expect((await call("POST", "/v1/update", { body: { force: true } })).status).toBe(204);
    await waitFor(
      async () => (await call("GET", "/v1/device")).json() as { commit: string; status: string },
      (s) => s.commit === commit && s.status === "Idle",
    );
  });
});

describe("fleetgate supervisor: port and stop", () => {
  it("listens on PLATFORM_SUPERVISOR_PORT without --port, and stops cleanly on SIGTERM and SIGINT", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const dir = tempDir();
    try {
      const device = await spawnSupervisor(["--unmanaged", "--api-key", KEY], dir, {
        PLATFORM_SUPERVISOR_PORT: String(port),
      });
      expect(device.port).toBe(port);
      expect((await fetch(`${device.url}/ping`)).status).toBe(200);
      expect(await device.stop()).toBe(0);
      const again = await spawnSupervisor(["--unmanaged", "--port", "0"], dir);
      // Without --api-key the stored key stays.
      expect([again.uuid, again.apiKey]).toEqual([device.uuid, KEY]);
      again.child.kill("SIGINT");
      expect(await again.exited).toBe(0);
    } finally {
      removeDir(dir);
    }
  });

  it("refuses a bad command line with the reason and the usage", async () => {
    const dir = tempDir();
    try {
      await expect(spawnSupervisor(["--unmanaged", "--uuid", "XYZ"], dir)).rejects.toThrow(
        /--uuid: 32 or 62 lowercase hex digits[\s\S]*usage: fleetgate supervisor/,
      );
      await expect(spawnSupervisor(["--api", "http://127.0.0.1:1", "--fleet", "1"], dir)).rejects.toThrow(
        /give either --provisioning-key or --token/,
      );
    } finally {
      removeDir(dir);
    }
  });
});
