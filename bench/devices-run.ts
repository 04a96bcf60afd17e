import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { devicesChart } from "./devices-chart.ts";
import { type DeviceApi, type DeviceLoad, type PhaseStats, round, SimulatedDevices } from "./devices-load.ts";
import { LoadProcesses } from "./devices-load-processes.ts";
import type {
  DevicesResult,
  DevicesRow,
  DevicesSettings,
  PostgresServerCpu,
  Sizes,
  StepResult,
} from "./devices-result.ts";
import { headlineRows, scalingTable } from "./devices-scaling.ts";
import { seedDevices } from "./devices-seed.ts";
import { PostgresCpu } from "./postgres-cpu.ts";
import { type Child, cpuMicros, rssBytes, startFleetgate } from "./processes.ts";

// The device bench itself, on a migrated empty database: seed, then per database configuration
// (one PostgreSQL; then, with `replica`, the same primary with one streaming replica) and instance
// count: give the devices a phase will poll their current ETag (through instances of their own,
// stopped before anything is measured, so the measured instances start with nothing cached), start
// the instances, and per API warm up, hold a steady phase at the devices' real rate and (with
// `ramp`) ramp to where p99 passes the limit or errors appear. bench/devices.ts wraps it in a
// PostgreSQL of its own and writes the files; test/bench/devices.test.ts runs it small.

export interface DevicesOptions extends DevicesSettings {
  /** A migrated, empty database (on the primary). */
  readonly databaseUrl: string;
  /**
   * Starts a streaming replica of the primary, waits until it has caught up, and answers its URL of
   * the database; needed when `replica` is set.
   */
  readonly addReplica?: () => Promise<string>;
  /** Stops the replica and removes its data. */
  readonly removeReplica?: () => Promise<void>;
  /** What PostgreSQL the run is on, for the result. */
  readonly databaseInfo?: { kind: "own primary" | "BENCH_DATABASE_URL"; settings: Record<string, string> };
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
  /** The primary's processes, and the replica's when there is one. */
  readonly postgres: readonly { readonly role: PostgresServerCpu["role"]; readonly cpu: PostgresCpu }[];
  readonly pollShare: number;
}

/**
 * One instance's `fleetgate_db_statements_total` by target, and the device requests it answered
 * (`fleetgate_http_requests_total` of the /device/ routes, whatever the status); zeros when it has none.
 */
async function statementsOf(url: string): Promise<{ primary: number; replica: number; served: number }> {
  const counts = { primary: 0, replica: 0, served: 0 };
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const match of text.matchAll(
      /^fleetgate_db_statements_total\{target="(primary|replica)"\} (\S+)$/gm,
    ))
      counts[match[1] as "primary" | "replica"] += Number(match[2]);
    for (const match of text.matchAll(
      /^fleetgate_http_requests_total\{[^}]*route="\/device\/[^}]*\} (\S+)$/gm,
    ))
      counts.served += Number(match[1]);
  } catch {
    // no metrics: left at zero
  }
  return counts;
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
  const loadAverageAtStart = round(loadavg()[0] ?? 0, 2);
  const statementsBefore = await Promise.all(servers.map((server) => statementsOf(server.url)));
  const serverBefore = servers.map((server) => cpuMicros(server.pid));
  const postgresBefore = await Promise.all(postgres.map(({ cpu }) => cpu.sample()));
  const walBefore = await postgres[0]?.cpu.wal();
  const stats: PhaseStats = await devices.run(
    servers.map((server) => server.url),
    api,
    rates,
    seconds,
  );
  const postgresAfter = await Promise.all(postgres.map(({ cpu }) => cpu.sample()));
  const walAfter = await postgres[0]?.cpu.wal();
  const serverUs = servers.map((server, i) => cpuMicros(server.pid) - (serverBefore[i] ?? 0));
  const perServerUs = postgres.map((_, i) =>
    PostgresCpu.between(postgresBefore[i] as Map<number, number>, postgresAfter[i] as Map<number, number>),
  );
  const postgresUs = perServerUs.some((us) => us === undefined)
    ? undefined
    : perServerUs.reduce((a: number, b) => a + (b ?? 0), 0);
  const [primaryConnections, replicaConnections] = await Promise.all(
    postgres.map(({ cpu }) => cpu.connections()),
  );
  const statementsAfter = await Promise.all(servers.map((server) => statementsOf(server.url)));
  const statements = { primary: 0, replica: 0 };
  let served = 0;
  servers.forEach((_, i) => {
    served += (statementsAfter[i]?.served ?? 0) - (statementsBefore[i]?.served ?? 0);
    for (const target of ["primary", "replica"] as const)
      statements[target] += (statementsAfter[i]?.[target] ?? 0) - (statementsBefore[i]?.[target] ?? 0);
  });
  const answered = stats.polls.ok + stats.polls.notModified + stats.reports.ok;
  const wallUs = stats.seconds * 1e6;
  const percent = (us: number) => round((us / wallUs) * 100, 1);
  // Per request the servers served: past saturation they also serve requests the generator gave up
  // on (no answer in 10 s), whose cost would otherwise be charged to the answered ones.
  const requests = Math.max(answered, served);
  const perRequest = (us: number) => (requests ? round(us / requests) : 0);
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
        : {
            cpuPercent: percent(postgresUs),
            cpuUsPerRequest: perRequest(postgresUs),
            servers: postgres.map(({ role }, i) => ({
              role,
              cpuPercent: percent(perServerUs[i] ?? 0),
              cpuUsPerRequest: perRequest(perServerUs[i] ?? 0),
            })),
          },
    generatorCpuPercent: percent(stats.generatorCpuMicros),
    answeredPerSecond: round(answered / stats.seconds, 1),
    servedPerSecond: round(served / stats.seconds, 1),
    loadAverageAtStart,
    connections: { primary: primaryConnections ?? 0, replica: replicaConnections ?? null },
    wal:
      walBefore && walAfter
        ? {
            bytesPerRequest: perRequest(walAfter.bytes - walBefore.bytes),
            flushesPerSecond: round((walAfter.syncs - walBefore.syncs) / stats.seconds, 1),
            commitsPerSecond: round((walAfter.commits - walBefore.commits) / stats.seconds, 1),
          }
        : undefined,
    statements,
  };
  return result;
}

const whyNot = (failed: StepResult, limit: number) => {
  const errors = failed.polls.errors + failed.reports.errors;
  if (errors > 0) return `${errors} errors (${failed.why.join("; ")})`;
  return `p99 ${Math.max(failed.polls.p99Ms, failed.reports.p99Ms)} ms > ${limit} ms`;
};

/** The ramp's rates: from --ramp-from, × --ramp-factor, up to --max-rate; none without `ramp`. */
function rampRates(options: DevicesSettings): number[] {
  const rates: number[] = [];
  if (options.ramp)
    for (let rate = options.rampFrom; rate <= options.maxRate; rate *= options.rampFactor) rates.push(rate);
  return rates;
}

/** The most polls one API's phases of a configuration can send: the devices to prime for them. */
export function pollsToPrime(options: DevicesSettings): number {
  const real = realRate(options);
  const share = real.polls / (real.polls + real.reports);
  const steady = real.polls * (options.warmupSeconds + options.seconds);
  const ramp = rampRates(options).reduce((n, rate) => n + rate * share * options.stepSeconds, 0);
  // A little over, for the ticks' rounding and the last step's stragglers.
  return Math.min(options.devices, Math.ceil((steady + ramp) * 1.02) + 100);
}

type Database = NonNullable<DevicesRow["database"]>;

async function measure(
  context: Context,
  servers: readonly Child[],
  api: DeviceApi,
  database: Database,
  primed: DevicesRow["primed"],
  log: (message: string) => void,
): Promise<DevicesRow> {
  const { options } = context;
  const real = realRate(options);
  const describe = (s: StepResult) =>
    `${s.rate} req/s (answered ${s.answeredPerSecond}/s): polls p50/p99 ${s.polls.p50Ms}/${s.polls.p99Ms} ms (${Math.round(s.notModifiedShare * 100)}% 304), ` +
    `reports ${s.reports.p50Ms}/${s.reports.p99Ms} ms, errors ${s.polls.errors + s.reports.errors}, ` +
    `CPU servers ${s.servers.cpuPercent.join("+")}% (${s.servers.cpuUsPerRequest} µs/req), ` +
    `PostgreSQL ${s.postgres?.servers?.map((p) => `${p.role} ${p.cpuPercent}% (${p.cpuUsPerRequest} µs/req)`).join(", ") ?? "–"}, ` +
    `generator ${s.generatorCpuPercent}%, commits ${s.wal?.commitsPerSecond ?? "–"}/s, WAL flushes ${s.wal?.flushesPerSecond ?? "–"}/s ` +
    `(${s.wal?.bytesPerRequest ?? "–"} B/req), load ${s.loadAverageAtStart}`;
  const where = `${api}, ${database}, ${servers.length} instance(s)`;
  if (options.warmupSeconds > 0) {
    const warm = await context.devices.run(
      servers.map((server) => server.url),
      api,
      { poll: real.polls, report: real.reports },
      options.warmupSeconds,
    );
    log(
      `${where}, warm-up ${options.warmupSeconds} s: p99 ${Math.max(warm.polls.p99Ms, warm.reports.p99Ms)} ms, errors ${warm.polls.errors + warm.reports.errors}`,
    );
  }
  const steady = await step(context, servers, api, real.polls + real.reports, options.seconds);
  log(`${where}, steady ${describe(steady)}${steady.held ? "" : " — does not hold"}`);
  const ramp: StepResult[] = [];
  for (const rate of rampRates(options)) {
    const result = await step(context, servers, api, rate, options.stepSeconds);
    ramp.push(result);
    log(`${where}, ramp ${describe(result)}${result.held ? "" : " — does not hold"}`);
    if (!result.held) break;
  }
  const best = ramp.filter((s) => s.held).at(-1);
  const failed = ramp.find((s) => !s.held);
  return {
    api,
    instances: servers.length,
    database,
    ...(primed ? { primed } : {}),
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

// The tables a seeded device has rows in (bench/devices-seed.ts): its actor, its row, its key, an
// environment and a configuration variable.
const DEVICE_TABLES = ["actor", "device", "api_key", "device_environment_variable", "device_config_variable"];

/** pg_total_relation_size of every table of the schema, and the per-device tables' bytes per device. */
export async function measureSizes(url: string, devices: number): Promise<Sizes> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
        ORDER BY pg_total_relation_size(c.oid) DESC`,
    );
    const tables = Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]));
    const [{ bytes }] = (
      await client.query<{ bytes: string }>("SELECT pg_database_size(current_database())::text AS bytes")
    ).rows as [{ bytes: string }];
    const perDevice = DEVICE_TABLES.reduce((n, table) => n + (tables[table] ?? 0), 0);
    return { tables, bytesPerDevice: round(perDevice / devices), databaseBytes: Number(bytes) };
  } finally {
    await client.end();
  }
}

/** Runs the device bench on `options.databaseUrl` (migrated, empty) and answers its result. */
export async function runDevicesBench(
  options: DevicesOptions,
  log: (message: string) => void = () => {},
): Promise<DevicesResult> {
  const loadAverage = loadavg().map((n) => round(n, 2));
  const seeded = await seedDevices(
    options.databaseUrl,
    { devices: options.devices, fleets: options.fleets, salt: randomBytes(8).toString("hex") },
    log,
  );
  log(`seeded ${options.devices} devices in ${options.fleets} fleets in ${(seeded.ms / 1000).toFixed(1)} s`);
  const afterSeed = await measureSizes(options.databaseUrl, options.devices);
  log(
    `${afterSeed.bytesPerDevice} bytes per device (pg_total_relation_size of ${DEVICE_TABLES.join(", ")}); database ${(afterSeed.databaseBytes / 1e9).toFixed(2)} GB`,
  );
  const devices: DeviceLoad =
    options.loadProcesses > 1
      ? await LoadProcesses.start(seeded, options.connections, options.changeEvery, options.loadProcesses)
      : new SimulatedDevices(seeded, options.connections, options.changeEvery);
  const primary = await PostgresCpu.open(options.databaseUrl);
  const servers: Child[] = [];
  const stopAll = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    servers.length = 0;
  };
  const baseEnv = {
    DATABASE_URL: options.databaseUrl,
    SUPERVISOR_KEY_SECRET: "bench-devices-supervisor-key-secret-0123456789",
    ADMIN_PASSWORD: "bench-devices-admin",
    // The seeded devices all reported at seed time and most report again only every few minutes:
    // the sweep must not take them offline (one UPDATE and a NOTIFY per device) mid-run.
    DEVICE_OFFLINE_TIMEOUT: "86400",
  };
  const real = realRate(options);
  const rows: DevicesRow[] = [];
  const primeMs: Partial<Record<DeviceApi, number>> = {};
  let replicaSetupMs: number | null = null;
  const databases: Database[] = options.replica ? ["primary", "primary+replica"] : ["primary"];
  if (options.replica && !options.addReplica) throw new Error("replica: needs addReplica");
  try {
    for (const database of databases) {
      let replica: PostgresCpu | undefined;
      const env: Record<string, string> = { ...baseEnv };
      try {
        if (database === "primary+replica") {
          const began = performance.now();
          const replicaUrl = await (options.addReplica as () => Promise<string>)();
          replicaSetupMs = round(performance.now() - began);
          log(`replica streaming and caught up in ${(replicaSetupMs / 1000).toFixed(1)} s`);
          env.DATABASE_REPLICA_URLS = replicaUrl;
          replica = await PostgresCpu.open(replicaUrl);
        }
        const context: Context = {
          options,
          devices,
          postgres: [
            { role: "primary", cpu: primary },
            ...(replica ? [{ role: "replica" as const, cpu: replica }] : []),
          ],
          pollShare: real.polls / (real.polls + real.reports),
        };
        for (const count of options.instances) {
          // The devices this configuration's phases will poll get their current ETag from instances
          // of their own, stopped before the phases: the measured ones start with nothing cached,
          // as an instance does for a device whose last poll was 15 minutes ago.
          const toPrime = pollsToPrime(options);
          const primed: Partial<Record<DeviceApi, { devices: number; ms: number }>> = {};
          for (let i = 0; i < count; i++) servers.push(await startFleetgate(baseEnv));
          for (const api of options.apis) {
            const result = await devices.prime(
              servers.map((server) => server.url),
              api,
              Math.min(64, options.connections * count),
              toPrime,
            );
            if (result.failed.length > 0)
              throw new Error(`priming ${api} failed: ${result.failed.join("; ")}`);
            primed[api] = { devices: toPrime, ms: round(result.ms) };
            primeMs[api] = round((primeMs[api] ?? 0) + result.ms);
            log(`${api}, ${database}: ${toPrime} devices polled once in ${(result.ms / 1000).toFixed(1)} s`);
          }
          await stopAll();
          for (let i = 0; i < count; i++) servers.push(await startFleetgate(env));
          log(`${count} fleetgate instance(s) listening (${database})`);
          for (const api of options.apis)
            rows.push(await measure(context, servers, api, database, primed[api], log));
          await stopAll();
        }
      } finally {
        await stopAll();
        await replica?.close();
        if (database === "primary+replica") await options.removeReplica?.();
      }
    }
    const afterRun = await measureSizes(options.databaseUrl, options.devices);
    const { databaseUrl: _url, addReplica: _add, removeReplica: _remove, databaseInfo, ...config } = options;
    const partial = {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? "unknown CPU",
        memoryGiB: Math.round(totalmem() / 1024 ** 3),
        node: process.version,
        postgres: await postgresVersion(options.databaseUrl),
      },
      loadAverage,
      config: { ...config, pollJitterS: POLL_JITTER_S },
      realRate: { polls: round(real.polls, 1), reports: round(real.reports, 1) },
      seedMs: round(seeded.ms),
      primeMs,
      database: {
        kind: databaseInfo?.kind ?? ("BENCH_DATABASE_URL" as const),
        settings: databaseInfo?.settings ?? {},
        replicaSetupMs,
      },
      sizes: { afterSeed, afterRun },
      rows,
    };
    const headline = headlineRows(partial);
    return { ...partial, headline, scaling: scalingTable({ ...partial, headline }) };
  } finally {
    await stopAll();
    await devices.close();
    await primary.close();
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
