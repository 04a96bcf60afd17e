import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { load } from "./load.ts";
import { bin, repoRoot } from "./paths.ts";
import { type Child, rssBytes, startFleetgate } from "./processes.ts";

const run = promisify(execFile);
const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** W9: the embedded server's memory (VmRSS, MiB) through a first start and a warm restart. */
export interface EmbeddedMemory {
  /** The first start (the data directory, migrations, catalogue): spawn to its first 200 on /ping. */
  readonly firstStartMs: number;
  readonly afterFirstStartMiB: number;
  /** After `fleetgate seed --demo`, which runs inside the server. */
  readonly afterSeedMiB: number;
  /**
   * The most it held in the minute after the first start, sampled every 100 ms: the start's own
   * work (V8 compiling PGlite's hot functions with its optimizing compiler) and the seed.
   */
  readonly firstStartTransientMiB: number;
  /** A minute after the first start, under the W1 and W2 reads of the demo data. */
  readonly firstStartUnderLoadMiB: number;
  /** The most it held from a minute after the first start on. */
  readonly firstStartPeakMiB: number;
  /** The same server restarted on its data: its most under the same load, from a minute after the restart. */
  readonly warmStartPeakMiB: number;
  readonly warmStartUnderLoadMiB: number;
  /** The most it held in the minute after the restart, sampled every 100 ms, before the reads. */
  readonly warmStartTransientMiB: number;
}

const get = (path: string) => ({ method: "GET" as const, path });

/** The most the server holds (RSS, MiB) while `work` runs, sampled every `everyMs`, and its last. */
async function mostWhile(
  server: Child,
  work: Promise<unknown>,
  everyMs = 100,
): Promise<{ peak: number; last: number }> {
  let most = rssBytes(server.pid);
  const sampler = setInterval(() => {
    most = Math.max(most, rssBytes(server.pid));
  }, everyMs);
  try {
    await work;
  } finally {
    clearInterval(sampler);
  }
  const last = rssBytes(server.pid);
  return { peak: Math.max(most, last) / MiB, last: last / MiB };
}

/** Waits until a minute after `spawned` (a `performance.now()`). */
const minuteAfter = (spawned: number) => sleep(Math.max(0, spawned + 60_000 - performance.now()));

/**
 * `seconds` of W1 (a device by uuid) and then of W2 (a fleet with its devices) as the demo user,
 * sampling the server's RSS every second; answers the most it saw and the last.
 */
async function demoLoad(server: Child, seconds: number): Promise<{ peak: number; last: number }> {
  const login = await fetch(`${server.url}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "demo", password: "demo-password" }),
  });
  const headers = { authorization: `Bearer ${await login.text()}` };
  const read = async (path: string) =>
    ((await (await fetch(`${server.url}${path}`, { headers })).json()) as { d: Record<string, unknown>[] }).d;
  const uuids = (await read("/v6/device?$select=uuid")).map((row) => String(row.uuid));
  const fleets = (await read("/v6/application?$select=id")).map((row) => String(row.id));
  const target = { name: "fleetgate", url: server.url, pid: server.pid, headers };
  const reads = async () => {
    await load(target, (uuid) => get(`/v6/device(uuid='${uuid}')`), uuids, seconds / 2, 8);
    await load(
      target,
      (fleet) =>
        get(`/v6/application(${fleet})?$select=id,app_name&$expand=owns__device($select=id,device_name)`),
      fleets,
      seconds / 2,
      8,
    );
  };
  return mostWhile(server, reads(), 1000);
}

/**
 * The embedded default as a new user meets it: `fleetgate serve` on a new data directory, the demo
 * seed run into it, then `seconds` of demo reads from a minute after the start on; then the same
 * server restarted on that directory, under the same reads from a minute after the restart on. What
 * each start held in its first minute is reported on its own.
 */
export async function measureEmbeddedMemory(
  env: Record<string, string>,
  seconds: number,
): Promise<EmbeddedMemory> {
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-bench-memory-"));
  const embedded = { ...env, DATABASE_URL: "", DATA_DIR: dataDir };
  try {
    const spawned = performance.now();
    const first = await startFleetgate(embedded);
    let firstStart: Pick<EmbeddedMemory, "afterFirstStartMiB" | "afterSeedMiB" | "firstStartTransientMiB"> & {
      peak: number;
      last: number;
    };
    try {
      const afterFirstStartMiB = rssBytes(first.pid) / MiB;
      const seeding = await mostWhile(
        first,
        run(process.execPath, [bin, "seed", "--demo"], {
          cwd: repoRoot,
          env: { ...process.env, ...embedded, LOG_LEVEL: "silent" },
        }),
      );
      const settling = await mostWhile(first, minuteAfter(spawned));
      const firstStartTransientMiB = Math.max(seeding.peak, settling.peak);
      firstStart = {
        afterFirstStartMiB,
        afterSeedMiB: seeding.last,
        firstStartTransientMiB,
        ...(await demoLoad(first, seconds)),
      };
    } finally {
      await first.stop();
    }
    const restarted = performance.now();
    const warm = await startFleetgate(embedded);
    try {
      const warmStartTransientMiB = (await mostWhile(warm, minuteAfter(restarted))).peak;
      const warmLoad = await demoLoad(warm, seconds);
      return {
        firstStartMs: first.startMs,
        afterFirstStartMiB: firstStart.afterFirstStartMiB,
        afterSeedMiB: firstStart.afterSeedMiB,
        firstStartTransientMiB: firstStart.firstStartTransientMiB,
        firstStartUnderLoadMiB: firstStart.last,
        firstStartPeakMiB: firstStart.peak,
        warmStartTransientMiB,
        warmStartPeakMiB: warmLoad.peak,
        warmStartUnderLoadMiB: warmLoad.last,
      };
    } finally {
      await warm.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
