// `npm run bench:jobs [-- --devices 10000] [-- --runs 3] [-- --concurrency 200] [-- --batch 100]`: issue 23's job workload. One command
// (GET /ping) to every device of a fleet of simulated devices (`fleetgate fleet`), sent as a job
// (`Prefer: respond-async`): how long the submission takes, how long the job takes to finish against
// a raw keep-alive fan-out of the same devices from this process, and the server's RSS while it
// runs; then the same with a second fleetgate instance on the same PostgreSQL sharing the work.
// Needs PostgreSQL (BENCH_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432);
// uses a database of its own, dropped at the end.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createAdminKey, migrateDatabase } from "./data.ts";
import { bin, repoRoot, resultsDir } from "./paths.ts";
import { type Child, rssBytes, startFleetgate } from "./processes.ts";

const { values: flags } = parseArgs({
  options: {
    devices: { type: "string", default: "10000" },
    runs: { type: "string", default: "3" },
    concurrency: { type: "string", default: "200" },
    batch: { type: "string", default: "100" },
  },
});
const DEVICES = Number(flags.devices);
const RUNS = Number(flags.runs);
// The per-job limit (COMMAND_JOB_CONCURRENCY) and the raw fan-out's: the same number of devices in flight.
const CONCURRENCY = Number(flags.concurrency);
// COMMAND_JOB_BATCH_SIZE: devices per batch.
const BATCH = Number(flags.batch);
const SECRET = "bench-jobs-supervisor-key-secret-0123456789";
const MiB = 1024 * 1024;

const began = performance.now();
const log = (message: string) =>
  process.stderr.write(
    `[bench:jobs ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}\n`,
  );

const serverUrl = new URL(process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres");
const database = `fg_bench_jobs_${process.pid}`;
const databaseUrl = (() => {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
})();

async function admin(text: string): Promise<void> {
  const url = new URL(serverUrl);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

interface FleetDevice {
  readonly uuid: string;
  readonly port: number;
  readonly apiKey: string;
}

async function api(base: string, key: string, method: string, path: string, body?: unknown, headers = {}) {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
  return { body: text ? JSON.parse(text) : undefined, ms: performance.now() - started };
}

/** `fleetgate fleet` with DEVICES devices; resolves with each device's port and key once all listen. */
async function startFleet(fleetgate: string, key: string, fleetId: number) {
  const provisioning = (await api(fleetgate, key, "POST", `/api-key/application/${fleetId}/provisioning`))
    .body as string;
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-bench-jobs-"));
  const args = [
    bin,
    "fleet",
    "--api",
    fleetgate,
    "--provisioning-key",
    provisioning,
    "--fleet",
    String(fleetId),
  ];
  args.push("--devices", String(DEVICES), "--json", "--data-dir", dataDir, "--concurrency", "64");
  args.push("--heartbeat-interval", "3600", "--poll-interval", "3600");
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const devices = await new Promise<FleetDevice[]>((resolve, reject) => {
    const failed = (code: number | null) => reject(new Error(`fleet exited with ${code}:\n${stderr}`));
    child.once("exit", failed);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const lines = stdout.split("\n").filter(Boolean);
      if (lines.length >= DEVICES) {
        child.off("exit", failed);
        resolve(lines.map((line) => JSON.parse(line) as FleetDevice));
      }
    });
  });
  return { child, dataDir, devices };
}

async function waitReported(fleetId: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 600_000;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM device WHERE belongs_to__application = $1 AND is_online
           AND supervisor_api_port IS NOT NULL AND supervisor_api_key_ciphertext IS NOT NULL`,
        [fleetId],
      );
      if (rows[0]?.n === DEVICES) return;
      if (Date.now() > deadline) throw new Error(`only ${rows[0]?.n} devices reported`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await client.end();
  }
}

/** The baseline: GET /ping to every device over keep-alive connections, CONCURRENCY at once. */
async function rawFanOut(
  devices: readonly FleetDevice[],
): Promise<{ ms: number; failed: number; why: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const started = performance.now();
  let next = 0;
  let failed = 0;
  const why = new Set<string>();
  const worker = async () => {
    while (next < devices.length) {
      const device = devices[next++] as FleetDevice;
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
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;
  agent.destroy();
  return { ms, failed, why: [...why].slice(0, 5) };
}

interface JobRun {
  readonly targeted: number;
  readonly submitMs: number;
  readonly finishMs: number;
  readonly status: string;
  readonly ok: number;
  /** RSS of each instance, MiB: at submission and the largest sampled during the job. */
  readonly rssStartMiB: number[];
  readonly rssPeakMiB: number[];
}

async function runJob(instances: readonly Child[], key: string, fleetId: number): Promise<JobRun> {
  const [first] = instances;
  if (!first) throw new Error("no instance");
  const rssStart = instances.map((instance) => rssBytes(instance.pid));
  const rssPeak = [...rssStart];
  const sampler = setInterval(() => {
    instances.forEach((instance, i) => {
      rssPeak[i] = Math.max(rssPeak[i] ?? 0, rssBytes(instance.pid));
    });
  }, 100);
  const started = performance.now();
  const submitted = await api(
    first.url,
    key,
    "POST",
    "/supervisor/ping",
    { appId: fleetId, method: "GET" },
    {
      prefer: "respond-async",
    },
  );
  const job = submitted.body as { id: number; targeted_count: number };
  let state: { status: string; ok_count: number; finished_at: string | null };
  for (;;) {
    state = (
      await api(first.url, key, "GET", `/v6/command_job(${job.id})?$select=status,ok_count,finished_at`)
    ).body.d[0];
    if (state.finished_at) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const finishMs = performance.now() - started;
  clearInterval(sampler);
  return {
    targeted: job.targeted_count,
    submitMs: submitted.ms,
    finishMs,
    status: state.status,
    ok: state.ok_count,
    rssStartMiB: rssStart.map((bytes) => bytes / MiB),
    rssPeakMiB: rssPeak.map((bytes) => bytes / MiB),
  };
}

/** p50 and p99 of small job submissions (one device each), the latency a caller sees. */
async function submitLatency(base: string, key: string, uuids: readonly string[], count: number) {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const uuid = uuids[i % uuids.length];
    samples.push(
      (await api(base, key, "POST", "/supervisor/ping", { uuid, method: "GET" }, { prefer: "respond-async" }))
        .ms,
    );
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) =>
    samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] as number;
  return { p50: at(0.5), p99: at(0.99) };
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main() {
  const spawned: { stop(): Promise<void> }[] = [];
  let fleet: { child: ChildProcess; dataDir: string; devices: FleetDevice[] } | undefined;
  await admin(`CREATE DATABASE "${database}"`);
  try {
    await migrateDatabase(databaseUrl);
    const env = {
      DATABASE_URL: databaseUrl,
      SUPERVISOR_KEY_SECRET: SECRET,
      ADMIN_PASSWORD: "bench-jobs-admin",
      // The simulated devices report once (their heartbeats are an hour apart): the sweep must not
      // mark them offline during the run.
      DEVICE_OFFLINE_TIMEOUT: "86400",
      COMMAND_JOB_CONCURRENCY: String(CONCURRENCY),
      COMMAND_JOB_BATCH_SIZE: String(BATCH),
      // One instance may run the whole per-job limit.
      COMMAND_JOB_INSTANCE_CONCURRENCY: String(CONCURRENCY),
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
    };
    const first = await startFleetgate(env);
    spawned.push(first);
    const key = await createAdminKey(databaseUrl);
    const organization = (await api(first.url, key, "POST", "/v6/organization", { name: "bench-jobs" })).body;
    const created = (
      await api(first.url, key, "POST", "/v6/application", {
        app_name: "bench-jobs",
        device_type: "raspberrypi4-64",
        organization: organization.id,
      })
    ).body as { id: number };
    log(`starting ${DEVICES} simulated devices`);
    fleet = await startFleet(first.url, key, created.id);
    await waitReported(created.id);
    log(`${DEVICES} devices online`);

    const raw: number[] = [];
    const rawFailed: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const run = await rawFanOut(fleet.devices);
      raw.push(run.ms);
      rawFailed.push(run.failed);
      log(
        `raw keep-alive fan-out: ${run.ms.toFixed(0)} ms, ${run.failed} not 200 ${JSON.stringify(run.why)}`,
      );
    }

    const uuids = fleet.devices.map((device) => device.uuid);
    // The first job starts this instance's queue (pg-boss); the ones measured find it running.
    await submitLatency(first.url, key, uuids, 1);
    const small = await submitLatency(first.url, key, uuids, 100);
    log(`one-device job submissions: p50 ${small.p50.toFixed(1)} ms, p99 ${small.p99.toFixed(1)} ms`);

    const one: JobRun[] = [];
    for (let i = 0; i < RUNS; i++) {
      one.push(await runJob([first], key, created.id));
      log(`1 instance: ${JSON.stringify(one.at(-1))}`);
    }
    const second = await startFleetgate(env);
    spawned.push(second);
    const two: JobRun[] = [];
    for (let i = 0; i < RUNS; i++) {
      two.push(await runJob([first, second], key, created.id));
      log(`2 instances: ${JSON.stringify(two.at(-1))}`);
    }

    const rawMs = median(raw);
    const summary = (runs: JobRun[]) => ({
      submitMs: runs.map((run) => Number(run.submitMs.toFixed(1))),
      finishMsMedian: Number(median(runs.map((run) => run.finishMs)).toFixed(0)),
      ratioToRaw: Number((median(runs.map((run) => run.finishMs)) / rawMs).toFixed(2)),
      statuses: runs.map((run) => run.status),
      targeted: runs.map((run) => run.targeted),
      ok: runs.map((run) => run.ok),
      rssStartMiB: runs[0]?.rssStartMiB.map((mib) => Math.round(mib)),
      rssPeakMiB: runs.map((run) => run.rssPeakMiB.map((mib) => Math.round(mib))),
    });
    const result = {
      date: new Date().toISOString(),
      devices: DEVICES,
      runs: RUNS,
      concurrency: CONCURRENCY,
      batch: BATCH,
      rawFanOutMs: raw.map((ms) => Number(ms.toFixed(0))),
      rawFanOutFailed: rawFailed,
      oneDeviceSubmitMs: { p50: Number(small.p50.toFixed(1)), p99: Number(small.p99.toFixed(1)) },
      oneInstance: summary(one),
      twoInstances: summary(two),
    };
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, "jobs-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    if (fleet) {
      const exited = new Promise((resolve) => fleet?.child.once("exit", resolve));
      if (fleet.child.exitCode === null) fleet.child.kill("SIGTERM");
      await exited;
      rmSync(fleet.dataDir, { recursive: true, force: true });
    }
    await Promise.all(spawned.map((child) => child.stop()));
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  }
}

await main();
