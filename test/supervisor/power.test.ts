import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  client,
  removeDir,
  tempDir,
  unmanaged,
  unmanagedDevice,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// /v1/reboot and /v1/shutdown: 202 {Data: OK, Error: null} once the application has
// stopped, 423 {Data: "", Error} while the update lock is held, unless forced.

const LOCKED = { Data: "", Error: "Lockfile exists for { appId: 1, service: main }" };

describe("fleetgate supervisor --unmanaged: reboot and shutdown", () => {
  // Slow enough steps to see the application down between the 202 and the boot.
  const { dir, device, call } = unmanagedDevice("--step-ms", "250");
  const status = async () => ((await call("GET", "/v1/device")).json() as { status: string }).status;

  it("reboots: 202 after stopping the application, which then starts again", async () => {
    const { containerId } = (await call("GET", "/v1/apps/1")).json() as { containerId: string };
    const answer = await call("POST", "/v1/reboot");
    expect([answer.status, answer.json()]).toEqual([202, { Data: "OK", Error: null }]);
    // The application is down: /v1/device shows its container exited, or starting again.
    expect(["exited", "Starting"]).toContain(await status());
    const seen = await waitFor(status, (s) => s === "Starting");
    await waitFor(status, (s) => s === "Idle");
    expect(seen).not.toContain("Stopping");
    // The device came back with the same container: a reboot restarts, it does not recreate.
    expect((await call("GET", "/v1/apps/1")).json()).toMatchObject({ containerId });
  });

  it("refuses to reboot or shut down while the update lock is held: 423 {Data: '', Error}", async () => {
    writeFileSync(join(dir, "updates.lock"), "");
    try {
      for (const path of ["/v1/reboot", "/v1/shutdown"]) {
        const answer = await call("POST", path, { body: { force: false } });
        expect([answer.status, answer.json()]).toEqual([423, LOCKED]);
      }
      expect(device.child.exitCode).toBeNull();
      const forced = await call("POST", "/v1/reboot", { body: { force: true } });
      expect([forced.status, forced.json()]).toEqual([202, { Data: "OK", Error: null }]);
      await waitFor(status, (s) => s === "Idle");
    } finally {
      // A forced reboot has already removed it (update-lock's force).
      rmSync(join(dir, "updates.lock"), { force: true });
    }
  });

  it("shuts down: 202, then the device is gone (the process exits 0)", async () => {
    const answer = await call("POST", "/v1/shutdown");
    expect([answer.status, answer.json()]).toEqual([202, { Data: "OK", Error: null }]);
    expect(await device.exited).toBe(0);
  });
});

describe("fleetgate supervisor --unmanaged: forced shutdown", () => {
  it("shuts down under the lock with force", async () => {
    const dir = tempDir();
    try {
      const device = await unmanaged(dir);
      writeFileSync(join(dir, "updates.lock"), "");
      const answer = await client(device)("POST", "/v1/shutdown", { body: { force: "true" } });
      expect([answer.status, answer.json()]).toEqual([202, { Data: "OK", Error: null }]);
      expect(await device.exited).toBe(0);
    } finally {
      removeDir(dir);
    }
  });
});
