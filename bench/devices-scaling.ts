import type { DevicesResult, HeadlineRow, Scaling, ScalingRow } from "./devices-result.ts";

// The device bench's headline (the steady phase at the devices' real rate on one instance, per API
// and database) and ARCHITECTURE.md's capacity table, derived from it by the arithmetic written
// into the result (`scaling.method`), so every figure of the table traces to a field of the file.

type Measured = Omit<DevicesResult, "headline" | "scaling">;

const round = (value: number, digits = 0): number => Number(value.toFixed(digits));

/** One row per API and database: the steady phase of the fewest instances. */
export function headlineRows(result: Measured): HeadlineRow[] {
  const fewest = Math.min(...result.rows.map((row) => row.instances));
  return result.rows
    .filter((row) => row.instances === fewest)
    .map((row) => {
      const s = row.steady;
      const pg = s.postgres;
      const role = (name: "primary" | "replica") =>
        pg?.servers?.find((server) => server.role === name)?.cpuUsPerRequest ?? null;
      const statements = s.statements ? s.statements.primary + s.statements.replica : 0;
      return {
        api: row.api,
        database: row.database ?? "primary",
        devices: result.config.devices,
        offeredPerSecond: s.rate,
        answeredPerSecond: s.answeredPerSecond ?? round(s.polls.perSecond + s.reports.perSecond, 1),
        held: s.held,
        p50Ms: Math.max(s.polls.p50Ms, s.reports.p50Ms),
        p99Ms: Math.max(s.polls.p99Ms, s.reports.p99Ms),
        errors: s.polls.errors + s.reports.errors,
        notModifiedShare: s.notModifiedShare,
        serverCpuUsPerRequest: s.servers.cpuUsPerRequest,
        serverCpuPercent: round(
          s.servers.cpuPercent.reduce((a, b) => a + b, 0),
          1,
        ),
        postgresCpuUsPerRequest: pg?.cpuUsPerRequest ?? null,
        primaryCpuUsPerRequest: pg?.servers ? role("primary") : (pg?.cpuUsPerRequest ?? null),
        replicaCpuUsPerRequest: role("replica"),
        postgresCpuPercent: pg?.cpuPercent ?? null,
        generatorCpuPercent: s.generatorCpuPercent,
        connections: s.connections ?? null,
        replicaStatementShare:
          s.statements && statements > 0 ? round(s.statements.replica / statements, 3) : null,
        loadAverageAtStart: s.loadAverageAtStart ?? null,
        walBytesPerRequest: s.wal?.bytesPerRequest ?? null,
        commitsPerSecond: s.wal?.commitsPerSecond ?? null,
        walFlushesPerSecond: s.wal?.flushesPerSecond ?? null,
      };
    });
}

/** Planned utilisation of a core: the rest is the headroom that keeps p99 low. */
export const PLANNED_UTILISATION = 0.5;
export const SCALING_DEVICES = [100_000, 1_000_000, 10_000_000];

/** The capacity table for 100,000 to 10,000,000 devices from the headline's measured costs. */
export function scalingTable(result: Measured & { headline: readonly HeadlineRow[] }): Scaling {
  const { pollIntervalS, reportIntervalS, pollJitterS } = result.config;
  const perDevice = 1 / (pollIntervalS + pollJitterS / 2) + 1 / reportIntervalS;
  const instances = Math.min(...result.rows.map((row) => row.instances));
  const worst = (rows: readonly HeadlineRow[], pick: (row: HeadlineRow) => number | null) => {
    const values = rows.map(pick).filter((value): value is number => value !== null);
    return values.length > 0 ? Math.max(...values) : null;
  };
  const alone = result.headline.filter((row) => row.database === "primary");
  const replicated = result.headline.filter((row) => row.database === "primary+replica");
  const bytesPerDevice = result.sizes
    ? Math.max(result.sizes.afterSeed.bytesPerDevice, result.sizes.afterRun.bytesPerDevice)
    : null;
  const inputs = {
    requestsPerSecondPerDevice: round(perDevice, 6),
    "headline[primary].serverCpuUsPerRequest (max over APIs)": worst(alone, (r) => r.serverCpuUsPerRequest),
    "headline[primary].postgresCpuUsPerRequest (max over APIs)": worst(
      alone,
      (r) => r.postgresCpuUsPerRequest,
    ),
    "headline[primary].connections.primary (max over APIs, per instance)": worst(alone, (r) =>
      r.connections ? r.connections.primary / instances : null,
    ),
    "headline[primary+replica].serverCpuUsPerRequest (max over APIs)": worst(
      replicated,
      (r) => r.serverCpuUsPerRequest,
    ),
    "headline[primary+replica].primaryCpuUsPerRequest (max over APIs)": worst(
      replicated,
      (r) => r.primaryCpuUsPerRequest,
    ),
    "headline[primary+replica].replicaCpuUsPerRequest (max over APIs)": worst(
      replicated,
      (r) => r.replicaCpuUsPerRequest,
    ),
    "headline[primary+replica].connections.primary (max over APIs, per instance)": worst(replicated, (r) =>
      r.connections ? r.connections.primary / instances : null,
    ),
    "headline[primary+replica].connections.replica (max over APIs, per instance)": worst(replicated, (r) =>
      r.connections?.replica != null ? r.connections.replica / instances : null,
    ),
    "max(sizes.afterSeed.bytesPerDevice, sizes.afterRun.bytesPerDevice)": bytesPerDevice,
    "headline.walBytesPerRequest (max over APIs and databases)": worst(
      result.headline,
      (r) => r.walBytesPerRequest,
    ),
    plannedUtilisation: PLANNED_UTILISATION,
  };
  const cores = (rate: number, us: number | null) =>
    us === null ? 0 : Math.ceil((rate * us) / 1e6 / PLANNED_UTILISATION);
  const table = (
    server: number | null,
    primaryUs: number | null,
    replicaUs: number | null,
    primaryConnections: number | null,
    replicaConnections: number | null,
  ): ScalingRow[] =>
    SCALING_DEVICES.map((devices) => {
      const rate = devices * perDevice;
      const n = Math.max(1, cores(rate, server));
      return {
        devices,
        requestsPerSecond: round(rate),
        instances: n,
        primaryCores: cores(rate, primaryUs),
        replicaCores: cores(rate, replicaUs),
        connectionsPrimary: Math.ceil(n * (primaryConnections ?? 0)),
        connectionsReplica: Math.ceil(n * (replicaConnections ?? 0)),
        diskGB: bytesPerDevice === null ? 0 : round((devices * bytesPerDevice) / 1e9, 1),
        walMBPerSecond: round((rate * (walBytes ?? 0)) / 1e6, 1),
      };
    });
  const v = (key: keyof typeof inputs) => inputs[key];
  const walBytes = v("headline.walBytesPerRequest (max over APIs and databases)");
  return {
    method: [
      `requests/s = devices × (1/(${pollIntervalS} + ${pollJitterS}/2) + 1/${reportIntervalS}) (the supervisor's poll with its mean jitter, and its report)`,
      `instances = ceil(requests/s × server CPU µs per request / 1e6 / ${PLANNED_UTILISATION}): one Node process uses one core, planned at ${PLANNED_UTILISATION * 100}% busy`,
      `primary (replica) cores = ceil(requests/s × the primary's (replica's) CPU µs per request / 1e6 / ${PLANNED_UTILISATION})`,
      "connections = instances × the connections one instance held open on the database (pg_stat_activity at the steady phase's end)",
      "disk = devices × bytes per device (pg_total_relation_size of a device's tables, the larger of after the seed and after the run's reports), per server: each replica holds the whole database",
      "WAL = requests/s × the primary's WAL bytes per request (pg_stat_wal), the largest measured",
      "every µs figure is the larger of v2's and v3's",
    ],
    inputs,
    primaryOnly: table(
      v("headline[primary].serverCpuUsPerRequest (max over APIs)"),
      v("headline[primary].postgresCpuUsPerRequest (max over APIs)"),
      null,
      v("headline[primary].connections.primary (max over APIs, per instance)"),
      null,
    ),
    withReplicas:
      replicated.length === 0
        ? null
        : table(
            v("headline[primary+replica].serverCpuUsPerRequest (max over APIs)"),
            v("headline[primary+replica].primaryCpuUsPerRequest (max over APIs)"),
            v("headline[primary+replica].replicaCpuUsPerRequest (max over APIs)"),
            v("headline[primary+replica].connections.primary (max over APIs, per instance)"),
            v("headline[primary+replica].connections.replica (max over APIs, per instance)"),
          ),
  };
}
