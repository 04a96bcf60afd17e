// `npm run bench:jobs [-- --devices 10000,100000] [-- --runs 2] [-- --concurrency 200] [-- --batch 100]
// [-- --simulator auto|fleet|stand-in] [-- --ports 1000]`: issues 23 and 29's job workload. One command
// (GET /ping) to every device of a fleet, sent as a job (`Prefer: respond-async`): how long the
// submission takes, how long the job takes to finish against a raw keep-alive fan-out of the same
// devices from this process, and the servers' RSS while it runs; on one fleetgate instance, then on
// two sharing the work (the same PostgreSQL). The devices: `fleetgate fleet` (a real supervisor per
// device) up to 10,000, one bench/device-stand-in.ts process for larger fleets (`auto`).
// Needs PostgreSQL (BENCH_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432); uses
// a database of its own, dropped at the end. Writes bench/results/jobs-<date>.{json,svg} and
// jobs-latest.{json,svg}.

import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createAdminKey, migrateDatabase } from "./data.ts";
import { type JobPhases, type JobsResult, type JobsRow, jobsChart } from "./jobs-chart.ts";
import {
  type Api,
  type DeviceSet,
  rawFanOut,
  type Simulator,
  startFleetDevices,
  startStandInDevices,
} from "./jobs-devices.ts";
import { resultsDir } from "./paths.ts";
import { type Child, rssBytes, startFleetgate } from "./processes.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    devices: { type: "string", default: "10000,100000" },
    runs: { type: "string", default: "2" },
    concurrency: { type: "string", default: "200" },
    batch: { type: "string", default: "100" },
    simulator: { type: "string", default: "auto" },
    ports: { type: "string", default: "1000" },
  },
});
const SIZES = (flags.devices as string).split(",").map((size) => Number(size.trim()));
const RUNS = Number(flags.runs);
// The per-job limit (COMMAND_JOB_CONCURRENCY) and the raw fan-out's: the same number of devices in flight.
const CONCURRENCY = Number(flags.concurrency);
// COMMAND_JOB_BATCH_SIZE: the width of a job's lanes.
const BATCH = Number(flags.batch);
const SIMULATOR = flags.simulator as Simulator | "auto";
const PORTS = Number(flags.ports);
// Up to this many devices, `auto` runs real supervisors (`fleetgate fleet`: a port and a data dir each).
const FLEET_LIMIT = 10_000;
const SECRET = "bench-jobs-supervisor-key-secret-0123456789";
const MiB = 1024 * 1024;

const began = performance.now();
const log = (message: string) =>
  process.stderr.write(
    `[bench:jobs ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}\n`,
  );

function apiOf(base: string, key: string): Api {
  return async (method, path, body, headers = {}) => {
    const started = performance.now();
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return { body: text ? JSON.parse(text) : undefined, ms: performance.now() - started };
  };
}

interface JobRun {
  readonly submitMs: number;
  readonly finishMs: number;
  readonly status: string;
  readonly ok: number;
  readonly rssMiB: { start: number; peak: number; end: number }[];
  readonly phases: JobPhases;
}

/** The job's phases (jobs-chart.ts), read from its rows once it finished. */
async function phasesOf(databaseUrl: string, job: number): Promise<JobPhases> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const since = (at: string) => `round(extract(epoch FROM ${at} - j.created_at) * 1000)::int`;
    const { rows } = await client.query<JobPhases>(
      `SELECT ${since("min(r.created_at)")} AS "rowsWritten", ${since("min(r.finished_at)")} AS "firstAnswer",
         ${since("percentile_disc(0.5) WITHIN GROUP (ORDER BY r.finished_at)")} AS "halfAnswered",
         ${since("max(r.finished_at)")} AS "allAnswered"
       FROM command_job j JOIN command_result r ON r.command_job = j.id WHERE j.id = $1 GROUP BY j.id`,
      [job],
    );
    return rows[0] as JobPhases;
  } finally {
    await client.end();
  }
}

async function runJob(
  instances: readonly Child[],
  api: Api,
  fleetId: number,
  databaseUrl: string,
): Promise<JobRun> {
  const rss = () => instances.map((instance) => rssBytes(instance.pid) / MiB);
  const start = rss();
  const peak = [...start];
  const sampler = setInterval(() => {
    rss().forEach((value, i) => {
      peak[i] = Math.max(peak[i] ?? 0, value);
    });
  }, 100);
  const started = performance.now();
  const submitted = await api(
    "POST",
    "/supervisor/ping",
    { appId: fleetId, method: "GET" },
    { prefer: "respond-async" },
  );
  const job = submitted.body as { id: number };
  let state: { status: string; ok_count: number; finished_at: string | null };
  for (;;) {
    state = (
      (await api("GET", `/v6/command_job(${job.id})?$select=status,ok_count,finished_at`)).body as {
        d: (typeof state)[];
      }
    ).d[0] as typeof state;
    if (state.finished_at) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const finishMs = performance.now() - started;
  clearInterval(sampler);
  const end = rss();
  return {
    submitMs: submitted.ms,
    finishMs,
    status: state.status,
    ok: state.ok_count,
    rssMiB: start.map((value, i) => ({
      start: value,
      peak: Math.max(peak[i] ?? 0, end[i] ?? 0),
      end: end[i] ?? 0,
    })),
    phases: await phasesOf(databaseUrl, job.id),
  };
}

/** p50 and p99 of small job submissions (one device each), the latency a caller sees. */
async function submitLatency(api: Api, uuids: readonly string[], count: number) {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const uuid = uuids[i % uuids.length];
    samples.push(
      (await api("POST", "/supervisor/ping", { uuid, method: "GET" }, { prefer: "respond-async" })).ms,
    );
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) =>
    samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] as number;
  return { p50: Number(at(0.5).toFixed(1)), p99: Number(at(0.99).toFixed(1)) };
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (value: number, digits = 0) => Number(value.toFixed(digits));

function row(set: DeviceSet, instances: number, raw: RawRuns, runs: readonly JobRun[]): JobsRow {
  const finishMsMedian = median(runs.map((run) => run.finishMs));
  return {
    devices: set.devices.length,
    simulator: set.simulator,
    instances,
    rawFanOutMs: raw.ms.map((ms) => round(ms)),
    rawFanOutFailed: raw.failed,
    submitMs: runs.map((run) => round(run.submitMs, 1)),
    finishMs: runs.map((run) => round(run.finishMs)),
    finishMsMedian: round(finishMsMedian),
    ratioToRaw: round(finishMsMedian / median(raw.ms), 2),
    statuses: runs.map((run) => run.status),
    ok: runs.map((run) => run.ok),
    rssMiB: runs.map((run) =>
      run.rssMiB.map((rss) => ({ start: round(rss.start), peak: round(rss.peak), end: round(rss.end) })),
    ),
    phasesMs: runs.map((run) => run.phases),
  };
}

interface RawRuns {
  readonly ms: number[];
  readonly failed: number[];
}

async function main() {
  const spawned: { stop(): Promise<void> }[] = [];
  const sets: DeviceSet[] = [];
  const scratch = await createScratchDatabase("fg_bench_jobs");
  const databaseUrl = scratch.url;
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
    const api = apiOf(first.url, await createAdminKey(databaseUrl));
    const organization = (await api("POST", "/v6/organization", { name: "bench-jobs" })).body as {
      id: number;
    };

    const raw = new Map<DeviceSet, RawRuns>();
    const one = new Map<DeviceSet, JobRun[]>();
    let oneDeviceSubmitMs = { p50: 0, p99: 0 };
    for (const size of SIZES) {
      const fleet = (
        await api("POST", "/v6/application", {
          app_name: `bench-jobs-${size}`,
          device_type: "raspberrypi4-64",
          organization: organization.id,
        })
      ).body as { id: number };
      const simulator = SIMULATOR === "auto" ? (size <= FLEET_LIMIT ? "fleet" : "stand-in") : SIMULATOR;
      log(`starting ${size} devices (${simulator})`);
      const set =
        simulator === "fleet"
          ? await startFleetDevices(api, first.url, databaseUrl, fleet.id, size)
          : await startStandInDevices(databaseUrl, SECRET, fleet.id, size, PORTS);
      sets.push(set);
      log(`${size} devices online`);
      const runs: RawRuns = { ms: [], failed: [] };
      for (let i = 0; i < RUNS; i++) {
        const run = await rawFanOut(set.devices, CONCURRENCY);
        runs.ms.push(run.ms);
        runs.failed.push(run.failed);
        log(
          `raw keep-alive fan-out: ${run.ms.toFixed(0)} ms, ${run.failed} not 200 ${JSON.stringify(run.why)}`,
        );
      }
      raw.set(set, runs);
      if (sets.length === 1) {
        const uuids = set.devices.map((device) => device.uuid);
        // The first job starts this instance's queue (pg-boss); the ones measured find it running.
        await submitLatency(api, uuids, 1);
        oneDeviceSubmitMs = await submitLatency(api, uuids, 100);
        log(`one-device job submissions: p50 ${oneDeviceSubmitMs.p50} ms, p99 ${oneDeviceSubmitMs.p99} ms`);
      }
      const jobs: JobRun[] = [];
      for (let i = 0; i < RUNS; i++) {
        jobs.push(await runJob([first], api, fleet.id, databaseUrl));
        log(`${size} devices, 1 instance: ${JSON.stringify(jobs.at(-1))}`);
      }
      one.set(set, jobs);
    }
    const second = await startFleetgate(env);
    spawned.push(second);
    const rows: JobsRow[] = [];
    for (const set of sets) {
      const jobs: JobRun[] = [];
      for (let i = 0; i < RUNS; i++) {
        jobs.push(await runJob([first, second], api, set.fleetId, databaseUrl));
        log(`${set.devices.length} devices, 2 instances: ${JSON.stringify(jobs.at(-1))}`);
      }
      const runs = raw.get(set) as RawRuns;
      rows.push(row(set, 1, runs, one.get(set) ?? []), row(set, 2, runs, jobs));
    }

    const result: JobsResult = {
      date: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}`,
      runs: RUNS,
      concurrency: CONCURRENCY,
      batch: BATCH,
      oneDeviceSubmitMs,
      rows,
    };
    mkdirSync(resultsDir, { recursive: true });
    const stamp = result.date.replaceAll(":", "-").slice(0, 19);
    for (const name of [`jobs-${stamp}`, "jobs-latest"]) {
      writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
      writeFileSync(join(resultsDir, `${name}.svg`), jobsChart(result));
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    log(`done; results in bench/results/jobs-${stamp}.{json,svg} and jobs-latest.*`);
  } finally {
    await Promise.all(sets.map((set) => set.stop()));
    await Promise.all(spawned.map((child) => child.stop()));
    await scratch.drop();
  }
}

await main();
