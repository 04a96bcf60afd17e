import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RunningSupervisor, type SupervisorOptions, startSupervisor } from "./agent.ts";
import type { Faults } from "./api/server.ts";
import { CloudClient } from "./cloud/cloud-client.ts";
import type { StateApi } from "./cloud/state-reporter.ts";
import { LOCK_FILE } from "./lock.ts";

// Many simulated devices in one process: each a full supervisor (its own data dir, port and
// key), registered into one fleet. What the proxy's tests, the benchmarks and demos run on.

export interface FleetOptions {
  readonly devices: number;
  /** Each device keeps its identity in `<baseDir>/<n>`, so a second run reuses the same devices. */
  readonly baseDir: string;
  readonly api: string;
  readonly fleet: number;
  readonly provisioningKey?: string;
  readonly token?: string;
  /** What every device shares (timings, versions, intervals); ports are picked freely. */
  readonly device: Omit<
    SupervisorOptions,
    "dataDir" | "port" | "managed" | "faults" | "uuid" | "apiKey" | "appId" | "supervisorVersion"
  >;
  /** Supervisor versions, given to the devices in turn (a fleet can mix old and new supervisors). */
  readonly supervisorVersions: readonly string[];
  readonly heartbeatMs: number;
  /** Where the devices' state reports go; v3 unless v2 is asked for. */
  readonly stateApi?: StateApi;
  readonly faults: Faults;
  /** 0 to 1: the share of devices whose application holds the update lock. */
  readonly lockedShare: number;
  /** 0 to 1: the share of devices that go away once started (they stop answering and reporting). */
  readonly offlineShare: number;
  /** How many devices start at once. */
  readonly concurrency: number;
  readonly onStarted?: (started: number, total: number) => void;
}

export interface RunningFleet {
  /** The devices still running, in order. */
  readonly devices: readonly RunningSupervisor[];
  close(): Promise<void>;
}

/** How many of `total` a share stands for (the first ones: deterministic, so tests know which). */
const shareOf = (share: number, total: number) => Math.round(share * total);

export async function startFleet(options: FleetOptions): Promise<RunningFleet> {
  // One provisioning key for the whole fleet, not one per device.
  const provisioningKey =
    options.provisioningKey ??
    (options.token
      ? await new CloudClient(options.api).createProvisioningKey(options.token, options.fleet)
      : undefined);
  if (!provisioningKey) throw new Error("a fleet needs --provisioning-key or --token");

  const started: RunningSupervisor[] = new Array(options.devices);
  const locked = shareOf(options.lockedShare, options.devices);
  let next = 0;
  let count = 0;
  const startOne = async (index: number) => {
    const dataDir = join(options.baseDir, String(index));
    const device = await startSupervisor({
      ...options.device,
      dataDir,
      port: 0,
      supervisorVersion: options.supervisorVersions[index % options.supervisorVersions.length] as string,
      appId: options.fleet,
      faults: options.faults,
      managed: {
        api: options.api,
        fleet: options.fleet,
        provisioningKey,
        heartbeatMs: options.heartbeatMs,
        stateApi: options.stateApi ?? "v3",
      },
    });
    // As an application would take it: the file exists while the lock is held.
    if (index < locked) writeFileSync(join(dataDir, LOCK_FILE), "");
    started[index] = device;
    options.onStarted?.(++count, options.devices);
  };
  const worker = async () => {
    while (next < options.devices) await startOne(next++);
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } catch (error) {
    await Promise.all(started.filter(Boolean).map((device) => device.close()));
    throw error;
  }

  // The last ones go away: they stop answering and reporting, and the cloud marks them offline.
  const leaving = shareOf(options.offlineShare, options.devices);
  const staying = started.slice(0, options.devices - leaving);
  await Promise.all(started.slice(options.devices - leaving).map((device) => device.close()));
  return {
    devices: staying,
    close: async () => {
      await Promise.all(staying.map((device) => device.close()));
    },
  };
}
