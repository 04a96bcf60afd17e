import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { KeyBox } from "../src/auth/key-box.ts";
import { bin, repoRoot } from "./paths.ts";

// The devices bench/jobs.ts sends its command to, and the raw fan-out it compares the jobs with.

export interface BenchDevice {
  readonly uuid: string;
  readonly port: number;
  readonly apiKey: string;
}

/** "fleet": `fleetgate fleet` (a real supervisor per device); "stand-in": bench/device-stand-in.ts. */
export type Simulator = "fleet" | "stand-in";

export interface DeviceSet {
  readonly fleetId: number;
  readonly simulator: Simulator;
  readonly devices: readonly BenchDevice[];
  stop(): Promise<void>;
}

/** An API call as the bench's admin. */
export type Api = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ body: unknown; ms: number }>;

function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  return exited;
}

/** Resolves once `count` devices of the fleet reported where they listen. */
async function waitReported(databaseUrl: string, fleetId: number, count: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 1_800_000;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND is_online
           AND supervisor_api_port IS NOT NULL AND supervisor_api_key_ciphertext IS NOT NULL`,
        [fleetId],
      );
      if (rows[0]?.n === count) return;
      if (Date.now() > deadline) throw new Error(`only ${rows[0]?.n} devices reported`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await client.end();
  }
}

/** `fleetgate fleet` with `count` devices; resolves once every one listens and reported. */
export async function startFleetDevices(
  api: Api,
  fleetgate: string,
  databaseUrl: string,
  fleetId: number,
  count: number,
): Promise<DeviceSet> {
  const provisioning = (await api("POST", `/api-key/application/${fleetId}/provisioning`)).body as string;
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-bench-jobs-"));
  const args = [bin, "fleet", "--api", fleetgate, "--provisioning-key", provisioning];
  args.push("--fleet", String(fleetId), "--devices", String(count), "--json", "--data-dir", dataDir);
  args.push("--concurrency", "64", "--heartbeat-interval", "3600", "--poll-interval", "3600");
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const devices = await new Promise<BenchDevice[]>((resolve, reject) => {
    const failed = (code: number | null) => reject(new Error(`fleet exited with ${code}:\n${stderr}`));
    child.once("exit", failed);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const lines = stdout.split("\n").filter(Boolean);
      if (lines.length >= count) {
        child.off("exit", failed);
        resolve(lines.map((line) => JSON.parse(line) as BenchDevice));
      }
    });
  });
  await waitReported(databaseUrl, fleetId, count);
  return {
    fleetId,
    simulator: "fleet",
    devices,
    async stop() {
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// Devices written per statement.
const CHUNK = 10_000;

/**
 * `count` devices in the fleet, written straight into the database as their state reports would
 * leave them (online, where their supervisor listens, its key sealed), all answered by one
 * bench/device-stand-in.ts process listening on `ports` ports.
 */
export async function startStandInDevices(
  databaseUrl: string,
  secret: string,
  fleetId: number,
  count: number,
  ports: number,
): Promise<DeviceSet> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "bench/device-stand-in.ts"), String(Math.min(ports, count))],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const listening = await new Promise<number[]>((resolve, reject) => {
    let stdout = "";
    const failed = (code: number | null) => reject(new Error(`stand-in exited with ${code}:\n${stderr}`));
    child.once("exit", failed);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      if (!stdout.includes("\n")) return;
      child.off("exit", failed);
      resolve(JSON.parse(stdout.split("\n")[0] as string) as number[]);
    });
  });
  const box = new KeyBox(secret);
  const planned = Array.from({ length: count }, (_, n) => ({
    port: listening[n % listening.length] as number,
    apiKey: `stand-in-key-${fleetId}-${n}`,
  }));
  const devices: BenchDevice[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let start = 0; start < count; start += CHUNK) {
      const chunk = planned.slice(start, start + CHUNK);
      const { rows } = await client.query<{ uuid: string; device_name: string }>(
        `WITH made AS (
           INSERT INTO "actor" ("id")
           SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int4)
           RETURNING "id"),
         numbered AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM made)
         INSERT INTO "device" ("belongs_to__application", "actor", "device_name", "is_of__device_type", "uuid",
           "is_online", "last_heartbeat_at", "supervisor_api_address", "supervisor_api_port",
           "supervisor_api_key_ciphertext", "supervisor_version")
         SELECT $2::int4, numbered."id", 'stand-in-' || ($3::int4 + n), a."is_for__device_type",
           md5('stand-in-' || $2::int4 || '-' || ($3::int4 + n)), true, now(), '127.0.0.1',
           ($4::int4[])[n], ($5::text[])[n], '17.0.0'
         FROM numbered, "application" a WHERE a."id" = $2::int4
         RETURNING "uuid", "device_name"`,
        [
          chunk.length,
          fleetId,
          start,
          chunk.map((device) => device.port),
          chunk.map((device) => box.seal(device.apiKey)),
        ],
      );
      // Each row's port and key are the n-th of the chunk's, n in its name.
      const uuids = new Map(rows.map((row) => [Number(row.device_name.slice("stand-in-".length)), row.uuid]));
      chunk.forEach((device, index) => {
        devices.push({ ...device, uuid: uuids.get(start + index + 1) ?? "" });
      });
    }
  } finally {
    await client.end();
  }
  return { fleetId, simulator: "stand-in", devices, stop: () => stopChild(child) };
}

/** The baseline: GET /ping to every device over keep-alive connections, `concurrency` at once. */
export async function rawFanOut(
  devices: readonly BenchDevice[],
  concurrency: number,
): Promise<{ ms: number; failed: number; why: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const started = performance.now();
  let next = 0;
  let failed = 0;
  const why = new Set<string>();
  const worker = async () => {
    while (next < devices.length) {
      const device = devices[next++] as BenchDevice;
      const status = await new Promise<number>((resolve) => {
        const outgoing = request(
          {
            agent,
            host: "127.0.0.1",
            port: device.port,
            path: `/ping?apikey=${encodeURIComponent(device.apiKey)}`,
            timeout: 10_000,
          },
          (response) => {
            response.resume();
            response.on("end", () => resolve(response.statusCode ?? 0));
          },
        );
        outgoing.on("timeout", () => outgoing.destroy(new Error("timeout")));
        outgoing.on("error", (error) => {
          why.add(error.message);
          resolve(0);
        });
        outgoing.end();
      });
      if (status !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - started;
  agent.destroy();
  return { ms, failed, why: [...why].slice(0, 5) };
}
