import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { devicesChart } from "./devices-chart.ts";
import { type DeviceApi, type DeviceLoad, type PhaseStats, round, SimulatedDevices } from "./devices-load.ts";
import { LoadProcesses } from "./devices-load-processes.ts";
import type { DevicesResult, DevicesRow, DevicesSettings, StepResult } from "./devices-result.ts";
import { seedDevices } from "./devices-seed.ts";
import { PostgresCpu } from "./postgres-cpu.ts";
import { type Child, cpuMicros, rssBytes, startFleetgate } from "./processes.ts";

// The device bench itself, on a migrated empty database: seed, start the instances, give every
// device its current ETag, then per instance count and API a steady phase at the devices' real
// rate and a ramp to where p99 passes the limit or errors appear. bench/devices.ts wraps it in a
// database of its own and writes the files; test/bench/devices.test.ts runs it small.

export interface DevicesOptions extends DevicesSettings {
  /** A migrated, empty database. */
  readonly databaseUrl: string;
}

// balena-supervisor adds a random delay of up to maxApiJitterDelay (60 s, src/lib/constants.ts)
// to every target-state poll interval (src/api-binder/poll.ts): on average half of it.
export const POLL_JITTER_S = 60;
const MiB = 1024 * 1024;

/** Requests per second `devices` devices make: a poll per interval (plus jitter), a report per interval. */
export function realRate(options: Pick<DevicesOptions, "devices" | "pollIntervalS" | "reportIntervalS">) {
  return {
    polls: options.devices / (options.pollIntervalS + POLL_JITTER_S / 2),
    reports: options.devices / options.reportIntervalS,
  };
}

interface Context {
  readonly options: DevicesOptions;
  readonly devices: DeviceLoad;
  readonly postgres: PostgresCpu;
  readonly pollShare: number;
}

async function step(
  context: Context,
  servers: readonly Child[],
  api: DeviceApi,
  rate: number,
  seconds: number,
) {
  const { options, devices, postgres, pollShare } = context;
  const rates = { poll: rate * pollShare, report: rate * (1 - pollShare) };
  const serverBefore = servers.map((server) => cpuMicros(server.pid));
  const postgresBefore = await postgres.sample();
  const stats: PhaseStats = await devices.run(
    servers.map((server) => server.url),
    api,
    rates,
    seconds,
  );
  const postgresUs = PostgresCpu.between(postgresBefore, await postgres.sample());
  const serverUs = servers.map((server, i) => cpuMicros(server.pid) - (serverBefore[i] ?? 0));
  const answered = stats.polls.ok + stats.polls.notModified + stats.reports.ok;
  const wallUs = stats.seconds * 1e6;
  const percent = (us: number) => round((us / wallUs) * 100, 1);
  const perRequest = (us: number) => (answered ? round(us / answered) : 0);
  const errors = stats.polls.errors + stats.reports.errors;
  const p99 = Math.max(stats.polls.p99Ms, stats.reports.p99Ms);
  const polled = stats.polls.ok + stats.polls.notModified;
  const result: StepResult = {
    rate: round(rate, 1),
    pollRate: round(rates.poll, 1),
    reportRate: round(rates.report, 1),
    seconds: stats.seconds,
    polls: stats.polls,
    reports: stats.reports,
    notModifiedShare: polled ? round(stats.polls.notModified / polled, 3) : 0,
    held: errors === 0 && p99 <= options.p99LimitMs,
    why: stats.why,
    servers: {
      cpuPercent: serverUs.map(percent),
      rssMiB: servers.map((server) => round(rssBytes(server.pid) / MiB)),
      cpuUsPerRequest: perRequest(serverUs.reduce((a, b) => a + b, 0)),
    },
    postgres:
      postgresUs === undefined
        ? null
        : { cpuPercent: percent(postgresUs), cpuUsPerRequest: perRequest(postgresUs) },
    generatorCpuPercent: percent(stats.generatorCpuMicros),
  };
  return result;
}

const whyNot = (failed: StepResult, limit: number) => {
  const errors = failed.polls.errors + failed.reports.errors;
  if (errors > 0) return `${errors} errors (${failed.why.join("; ")})`;
  return `p99 ${Math.max(failed.polls.p99Ms, failed.reports.p99Ms)} ms > ${limit} ms`;
};

async function measure(
  context: Context,
  servers: readonly Child[],
  api: DeviceApi,
  log: (message: string) => void,
): Promise<DevicesRow> {
  const { options } = context;
  const real = realRate(options);
  const describe = (s: StepResult) =>
    `${s.rate} req/s: polls p50/p99 ${s.polls.p50Ms}/${s.polls.p99Ms} ms (${Math.round(s.notModifiedShare * 100)}% 304), ` +
    `reports ${s.reports.p50Ms}/${s.reports.p99Ms} ms, errors ${s.polls.errors + s.reports.errors}, ` +
    `CPU servers ${s.servers.cpuPercent.join("+")}%, PostgreSQL ${s.postgres?.cpuPercent ?? "–"}%, generator ${s.generatorCpuPercent}%`;
  const steady = await step(context, servers, api, real.polls + real.reports, options.seconds);
  log(`${api}, ${servers.length} instance(s), steady ${describe(steady)}`);
  const ramp: StepResult[] = [];
  for (let rate = options.rampFrom; rate <= options.maxRate; rate *= options.rampFactor) {
    const result = await step(context, servers, api, rate, options.stepSeconds);
    ramp.push(result);
    log(
      `${api}, ${servers.length} instance(s), ramp ${describe(result)}${result.held ? "" : " — does not hold"}`,
    );
    if (!result.held) break;
  }
  const best = ramp.filter((s) => s.held).at(-1);
  const failed = ramp.find((s) => !s.held);
  return {
    api,
    instances: servers.length,
    steady,
    ramp,
    capacity: best
      ? {
          rate: best.rate,
          pollsPerSecond: best.polls.perSecond,
          reportsPerSecond: best.reports.perSecond,
          pollsPerSecondPerInstance: round(best.polls.perSecond / servers.length, 1),
          reportsPerSecondPerInstance: round(best.reports.perSecond / servers.length, 1),
          postgresCpuPercent: best.postgres?.cpuPercent ?? null,
        }
      : null,
    saturation: failed ? { rate: failed.rate, why: whyNot(failed, options.p99LimitMs) } : null,
  };
}

async function postgresVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (
      ((await client.query<{ v: string }>("SELECT version() AS v")).rows[0]?.v ?? "").split(" on ")[0] ?? ""
    );
  } finally {
    await client.end();
  }
}

/** Runs the device bench on `options.databaseUrl` (migrated, empty) and answers its result. */
export async function runDevicesBench(
  options: DevicesOptions,
  log: (message: string) => void = () => {},
): Promise<DevicesResult> {
  const seeded = await seedDevices(
    options.databaseUrl,
    { devices: options.devices, fleets: options.fleets, salt: randomBytes(8).toString("hex") },
    log,
  );
  log(`seeded ${options.devices} devices in ${options.fleets} fleets in ${(seeded.ms / 1000).toFixed(1)} s`);
  const servers: Child[] = [];
  const devices: DeviceLoad =
    options.loadProcesses > 1
      ? await LoadProcesses.start(seeded, options.connections, options.changeEvery, options.loadProcesses)
      : new SimulatedDevices(seeded, options.connections, options.changeEvery);
  const postgres = await PostgresCpu.open(options.databaseUrl);
  try {
    const env = {
      DATABASE_URL: options.databaseUrl,
      SUPERVISOR_KEY_SECRET: "bench-devices-supervisor-key-secret-0123456789",
      ADMIN_PASSWORD: "bench-devices-admin",
      // The seeded devices all reported at seed time and most report again only every few minutes:
      // the sweep must not take them offline (one UPDATE and a NOTIFY per device) mid-run.
      DEVICE_OFFLINE_TIMEOUT: "86400",
    };
    for (let i = 0; i < Math.max(...options.instances); i++) servers.push(await startFleetgate(env));
    log(`${servers.length} fleetgate instance(s) listening`);
    const primeMs: Partial<Record<DeviceApi, number>> = {};
    for (const api of options.apis) {
      const primed = await devices.prime(
        servers.map((server) => server.url),
        api,
        Math.min(64, options.connections * servers.length),
      );
      if (primed.failed.length > 0) throw new Error(`priming ${api} failed: ${primed.failed.join("; ")}`);
      primeMs[api] = round(primed.ms);
      log(`${api}: every device polled once in ${(primed.ms / 1000).toFixed(1)} s`);
    }
    const real = realRate(options);
    const context: Context = {
      options,
      devices,
      postgres,
      pollShare: real.polls / (real.polls + real.reports),
    };
    const rows: DevicesRow[] = [];
    for (const count of options.instances) {
      for (const api of options.apis) rows.push(await measure(context, servers.slice(0, count), api, log));
    }
    const { databaseUrl: _url, ...config } = options;
    return {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? "unknown CPU",
        memoryGiB: Math.round(totalmem() / 1024 ** 3),
        node: process.version,
        postgres: await postgresVersion(options.databaseUrl),
      },
      config: { ...config, pollJitterS: POLL_JITTER_S },
      realRate: { polls: round(real.polls, 1), reports: round(real.reports, 1) },
      seedMs: round(seeded.ms),
      primeMs,
      rows,
    };
  } finally {
    await devices.close();
    await postgres.close();
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Writes `devices-<date>.{json,svg}` and `devices-latest.{json,svg}` into `dir`; answers the dated name. */
export function writeDevicesResult(result: DevicesResult, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const stamp = `devices-${result.date.replaceAll(":", "-").slice(0, 19)}`;
  for (const name of [stamp, "devices-latest"]) {
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(dir, `${name}.svg`), devicesChart(result));
  }
  return stamp;
}
