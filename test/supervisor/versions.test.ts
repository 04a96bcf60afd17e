import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareVersions, parseVersion, type Version } from "../../src/supervisor/versions.ts";
import {
  client,
  removeDir,
  type SupervisorProcess,
  tempDir,
  unmanaged,
} from "../support/supervisor/supervisor-process.ts";

// --supervisor-version X serves exactly what supervisor X served: the v1 API from 1.1.0,
// /v1/device from 1.6, /v1/apps/:appId from 1.8, /v1/healthy from 6.5.0, host-config from
// 6.6.0. Each boundary is checked on both sides; a missing endpoint is a 404 like any
// unknown path (401 first without a key, as the auth middleware runs before routing).
// SemVer's order: a prerelease of a version comes before it, so 6.5.0-beta has no /v1/healthy yet.

const BOUNDARIES: [version: string, has: string[]][] = [
  ["1.0.9", []],
  ["1.1.0", ["api"]],
  ["1.5.9", ["api"]],
  ["1.6", ["api", "device"]],
  ["1.7.9", ["api", "device"]],
  ["1.8.0", ["api", "device", "apps"]],
  ["6.4.9", ["api", "device", "apps"]],
  ["6.5.0-beta", ["api", "device", "apps"]],
  ["6.5.0", ["api", "device", "apps", "healthy"]],
  ["6.5.0+rev2", ["api", "device", "apps", "healthy"]],
  ["6.5.9", ["api", "device", "apps", "healthy"]],
  ["6.6.0", ["api", "device", "apps", "healthy", "hostConfig"]],
  ["17.1.4", ["api", "device", "apps", "healthy", "hostConfig"]],
];

describe("fleetgate supervisor --supervisor-version", () => {
  const devices = new Map<string, SupervisorProcess>();
  const dirs: string[] = [];
  beforeAll(async () => {
    await Promise.all(
      BOUNDARIES.map(async ([version]) => {
        const dir = tempDir();
        dirs.push(dir);
        devices.set(version, await unmanaged(dir, "--supervisor-version", version));
      }),
    );
  });
  afterAll(async () => {
    await Promise.all([...devices.values()].map((device) => device.stop()));
    for (const dir of dirs) removeDir(dir);
  });

  it.each(BOUNDARIES)("%s serves %j and nothing newer", async (version, has) => {
    const device = devices.get(version) as SupervisorProcess;
    const call = client(device);
    // Absent: an open route falls through to the key check (401), a keyed one to the 404.
    const present = async (
      method: string,
      path: string,
      options: { open?: boolean; body?: unknown } = {},
    ) => {
      const answer = await call(method, path, { key: options.open ? null : undefined, body: options.body });
      if (options.open && answer.status === 401) {
        expect((await call(method, path)).status).toBe(404);
        return false;
      }
      return answer.status !== 404;
    };
    const all = async (checks: Promise<boolean>[]) => {
      const results = await Promise.all(checks);
      // Every endpoint of a part of the API comes and goes together.
      expect(new Set(results).size).toBe(1);
      return results[0] as boolean;
    };
    const probes = {
      api: await all([
        present("GET", "/ping", { open: true }),
        present("POST", "/v1/blink"),
        present("POST", "/v1/update"),
        present("POST", "/v1/restart", { body: { appId: 1 } }),
        present("POST", "/v1/purge", { body: { appId: 1 } }),
      ]),
      device: await present("GET", "/v1/device"),
      apps: await all([
        present("GET", "/v1/apps/1"),
        present("POST", "/v1/apps/1/stop"),
        present("POST", "/v1/apps/1/start"),
      ]),
      healthy: await present("GET", "/v1/healthy", { open: true }),
      hostConfig: await all([
        present("GET", "/v1/device/host-config"),
        present("PATCH", "/v1/device/host-config", { body: { network: {} } }),
      ]),
    };
    expect(Object.keys(probes).filter((feature) => probes[feature as keyof typeof probes])).toEqual(has);
    if (has.includes("device")) {
      const state = (await call("GET", "/v1/device")).json() as { supervisor_version: string };
      expect(state.supervisor_version).toBe(version);
    }
  });
});

describe("supervisor versions", () => {
  const version = (text: string) => parseVersion(text) as Version;

  it("puts a prerelease before its release and ignores build metadata", () => {
    expect(compareVersions(version("17.1.4-beta"), version("17.1.4"))).toBeLessThan(0);
    expect(compareVersions(version("17.1.4-beta.2"), version("17.1.4-beta.10"))).toBeLessThan(0);
    expect(compareVersions(version("17.1.4+rev2"), version("17.1.4"))).toBe(0);
    expect(compareVersions(version("17.1.3"), version("17.1.4-beta"))).toBeLessThan(0);
  });

  it("reads the short forms and refuses what is no version", () => {
    expect(version("1.6").version).toBe("1.6.0");
    expect(version("v6.5.0").version).toBe("6.5.0");
    expect(parseVersion("latest")).toBeNull();
    expect(parseVersion("1.2.3.4")).toBeNull();
  });
});
