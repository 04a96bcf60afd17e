import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Answer, type SerialSettings, send, serialPair, type Target } from "./load.ts";
import { bin, repoRoot } from "./paths.ts";
import type { LatencyRow } from "./report.ts";
import { proxyPing } from "./workloads.ts";

const PREFIX = "bench-proxy-";

export interface SimulatedFleet {
  readonly size: number;
  readonly fleetId: number;
  readonly child: ChildProcess;
  readonly dataDir: string;
}

async function api(target: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  const answer = await send(target, {
    method: method as "GET",
    path,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (answer.status >= 300) throw new Error(`${method} ${path}: HTTP ${answer.status} ${answer.body}`);
  return answer.body ? JSON.parse(answer.body) : undefined;
}

/** The proxy fleets of earlier runs go first, so each run registers its devices afresh. */
export async function removeProxyFleets(fleetgate: Target): Promise<void> {
  await api(
    fleetgate,
    "DELETE",
    `/v6/application?$filter=${encodeURIComponent(`startswith(app_name,'${PREFIX}')`)}`,
  );
}

/** `fleetgate fleet` with `size` devices in a new fleet; resolves once every device listens. */
async function startFleet(fleetgate: Target, size: number, organization: number): Promise<SimulatedFleet> {
  const created = (await api(fleetgate, "POST", "/v6/application", {
    app_name: `${PREFIX}${size}`,
    device_type: "bench-amd64",
    organization,
  })) as { id: number };
  const key = (await api(fleetgate, "POST", `/api-key/application/${created.id}/provisioning`)) as string;
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-bench-fleet-"));
  // Heartbeats and polls far apart: the devices should be quiet while the proxy is measured.
  const args = [
    bin,
    "fleet",
    "--api",
    fleetgate.url,
    "--provisioning-key",
    key,
    "--fleet",
    String(created.id),
  ];
  args.push("--devices", String(size), "--json", "--data-dir", dataDir, "--concurrency", "64");
  args.push("--heartbeat-interval", "3600", "--poll-interval", "3600");
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (code: number | null) =>
      reject(new Error(`fleet of ${size} exited with ${code}:\n${stderr}`));
    child.once("exit", failed);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      if (stdout.split("\n").filter(Boolean).length >= size) {
        child.off("exit", failed);
        resolve();
      }
    });
  });
  return { size, fleetId: created.id, child, dataDir };
}

/** Waits until the cloud has every device of each fleet online with the address it reported. */
async function waitReported(databaseUrl: string, fleets: readonly SimulatedFleet[], timeoutMs = 120_000) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (const fleet of fleets) {
      for (;;) {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND is_online
             AND supervisor_api_port IS NOT NULL AND supervisor_api_key_ciphertext IS NOT NULL`,
          [fleet.fleetId],
        );
        if (rows[0]?.n === fleet.size) break;
        if (Date.now() > deadline)
          throw new Error(`fleet of ${fleet.size}: only ${rows[0]?.n} devices reported`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await client.end();
  }
}

export async function startProxyFleets(
  fleetgate: Target,
  databaseUrl: string,
  sizes: readonly number[],
): Promise<SimulatedFleet[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ id: number }>(`SELECT id FROM organization WHERE handle = 'bench'`);
  await client.end();
  const organization = rows[0]?.id as number;
  await removeProxyFleets(fleetgate);
  const fleets = await Promise.all(sizes.map((size) => startFleet(fleetgate, size, organization)));
  await waitReported(databaseUrl, fleets);
  return fleets;
}

export async function stopProxyFleets(fleets: readonly SimulatedFleet[]): Promise<void> {
  await Promise.all(
    fleets.map(async (fleet) => {
      if (fleet.child.exitCode === null) {
        const exited = new Promise((resolve) => fleet.child.once("exit", resolve));
        fleet.child.kill("SIGTERM");
        await exited;
      }
      rmSync(fleet.dataDir, { recursive: true, force: true });
    }),
  );
}

/** W5 at one N: serial `/ping` fan-outs through fleetgate's proxy and through the raw one. */
export async function measureFanOut(
  fleet: SimulatedFleet,
  fleetgate: Target,
  baseline: Target,
  settings: SerialSettings,
  log: (message: string) => void,
): Promise<LatencyRow> {
  let statements = 0;
  const check = (answer: Answer) => {
    const results = JSON.parse(answer.body) as { statusCode: number }[];
    const ok =
      answer.status === 207 && results.length === fleet.size && results.every((r) => r.statusCode === 200);
    if (!ok) {
      // The devices that did not answer 200, not the first devices of a long body (which did).
      const failed = Array.isArray(results) ? results.filter((result) => result.statusCode !== 200) : [];
      const shown = failed.length ? JSON.stringify(failed.slice(0, 3)) : answer.body.slice(0, 300);
      throw new Error(
        `W5 N=${fleet.size}: HTTP ${answer.status}, ${results.length} results, ${failed.length} not 200: ${shown}`,
      );
    }
    const counted = answer.headers.get("x-sql-statements");
    if (counted !== null) statements = Math.max(statements, Number(counted));
  };
  const build = () => proxyPing(fleet.fleetId);
  const { fleetgate: ours, baseline: theirs } = await serialPair(fleetgate, baseline, build, check, settings);
  log(`W5 N=${fleet.size}: ${ours.p50Ms.toFixed(1)} vs ${theirs.p50Ms.toFixed(1)} ms`);
  return {
    id: `W5 N=${fleet.size}`,
    group: "W5",
    title: "POST /supervisor/ping {appId, method: GET}",
    status: "ok",
    fleetgate: ours,
    baseline: theirs,
    ratio: ours.p50Ms / theirs.p50Ms,
    statements,
  };
}
