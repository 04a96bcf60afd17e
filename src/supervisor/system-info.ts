import { statfsSync } from "node:fs";
import { cpus, freemem, loadavg, networkInterfaces, totalmem } from "node:os";

// What the device knows about the machine it runs on, for /v1/device and state reports.

// balena-sdk reads features off the "balenaOS x.y.z" prefix, so the simulated OS keeps it.
export const OS_VERSION = "balenaOS 6.0.13";
export const OS_VARIANT = "prod";

function externalInterfaces() {
  return Object.values(networkInterfaces())
    .flat()
    .filter((info) => info !== undefined && !info.internal && info.family === "IPv4");
}

/** Space-separated, as the real supervisor reports them. */
export function ipAddresses(): string {
  const addresses = externalInterfaces().map((info) => info?.address);
  return addresses.length ? addresses.join(" ") : "127.0.0.1";
}

export function macAddress(): string | null {
  return externalInterfaces()[0]?.mac ?? null;
}

const MIB = 1024 * 1024;

export interface Metrics {
  readonly memory_usage: number;
  readonly memory_total: number;
  readonly storage_usage?: number;
  readonly storage_total?: number;
  readonly cpu_usage: number;
  readonly is_undervolted: boolean;
}

export function metrics(dataDir: string): Metrics {
  const storage = (() => {
    try {
      const stats = statfsSync(dataDir);
      return {
        storage_total: Math.round((stats.blocks * stats.bsize) / MIB),
        storage_usage: Math.round(((stats.blocks - stats.bfree) * stats.bsize) / MIB),
      };
    } catch {
      return {};
    }
  })();
  return {
    memory_total: Math.round(totalmem() / MIB),
    memory_usage: Math.round((totalmem() - freemem()) / MIB),
    ...storage,
    // The one-minute load per core, as a percentage: close enough to what the OS reports.
    cpu_usage: Math.min(100, Math.round(((loadavg()[0] ?? 0) / Math.max(cpus().length, 1)) * 100)),
    is_undervolted: false,
  };
}
