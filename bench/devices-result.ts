import type { DeviceApi, KindStats } from "./devices-load.ts";

// What `npm run bench:devices` measures, as written to bench/results/devices-*.json.

/** What a run is asked for (bench/devices.ts's flags). */
export interface DevicesSettings {
  readonly devices: number;
  readonly fleets: number;
  readonly instances: readonly number[];
  readonly apis: readonly DeviceApi[];
  /** The steady phase, at the rate N devices make at the supervisor's intervals. */
  readonly seconds: number;
  readonly stepSeconds: number;
  /** The ramp: its first rate (requests/s), the factor between steps, and where it stops. */
  readonly rampFrom: number;
  readonly rampFactor: number;
  readonly maxRate: number;
  readonly p99LimitMs: number;
  readonly pollIntervalS: number;
  readonly reportIntervalS: number;
  /** One report in this many is a state change; the rest carry metrics. */
  readonly changeEvery: number;
  /** Keep-alive connections per instance (shared out among the load processes). */
  readonly connections: number;
  /** Processes that send the load (1: the bench's own); each drives its share of the devices. */
  readonly loadProcesses: number;
  /** Unmeasured load at the devices' real rate before each steady phase (connections, JIT, shared caches). */
  readonly warmupSeconds: number;
  /** Whether each configuration also ramps up to where p99 passes the limit. */
  readonly ramp: boolean;
  /** Whether the steady phases run again with one streaming replica (DATABASE_REPLICA_URLS). */
  readonly replica: boolean;
}

/** What one PostgreSQL server (the primary, or the replica) used in a step. */
export interface PostgresServerCpu {
  readonly role: "primary" | "replica";
  readonly cpuPercent: number;
  readonly cpuUsPerRequest: number;
}

/** One load step: a total request rate held for a while, and what it cost. */
export interface StepResult {
  /** Requests per second sent (polls + reports), and of each kind. */
  readonly rate: number;
  readonly pollRate: number;
  readonly reportRate: number;
  readonly seconds: number;
  readonly polls: KindStats;
  readonly reports: KindStats;
  /** 304s among the answered polls. */
  readonly notModifiedShare: number;
  /** Whether it held: both kinds' p99 within the limit and no errors. */
  readonly held: boolean;
  readonly why: readonly string[];
  /** Each instance used: CPU (percent of one core) and RSS at the end; CPU µs per request served, all instances. */
  readonly servers: {
    readonly cpuPercent: readonly number[];
    readonly rssMiB: readonly number[];
    readonly cpuUsPerRequest: number;
  };
  /**
   * PostgreSQL's processes (this database's backends and the server's own; with a replica, both
   * servers', and each in `servers`); null when not on this machine.
   */
  readonly postgres: {
    readonly cpuPercent: number;
    readonly cpuUsPerRequest: number;
    readonly servers?: readonly PostgresServerCpu[];
  } | null;
  /** Requests answered per second (200 or 304), polls and reports: the rate the step held. */
  readonly answeredPerSecond?: number;
  /**
   * Device requests the instances served per second (their `fleetgate_http_requests_total`), with
   * those the generator had given up on; every "per request" figure divides by the larger of this
   * and the answered ones.
   */
  readonly servedPerSecond?: number;
  /** The 1-minute load average when the step began. */
  readonly loadAverageAtStart?: number;
  /** Connections open on the bench's database at the step's end (pg_stat_activity, the bench's own left out). */
  readonly connections?: { readonly primary: number; readonly replica: number | null };
  /**
   * The primary's WAL in the step (pg_stat_wal, the whole server): bytes written per answered
   * request, flushes (fsyncs) per second, and the database's commits per second (pg_stat_database).
   */
  readonly wal?: {
    readonly bytesPerRequest: number;
    readonly flushesPerSecond: number;
    readonly commitsPerSecond: number;
  };
  /** SQL statements the instances sent in the step, by target (`fleetgate_db_statements_total`). */
  readonly statements?: { readonly primary: number; readonly replica: number };
  /** The load processes' CPU (percent of one core, summed): near 100 per process, they are the bottleneck. */
  readonly generatorCpuPercent: number;
}

export interface DevicesRow {
  readonly api: DeviceApi;
  readonly instances: number;
  /** One PostgreSQL, or the primary with one streaming replica (DATABASE_REPLICA_URLS). */
  readonly database?: "primary" | "primary+replica";
  /** The devices polled once (closed loop, by an instance of its own, stopped before the phase) to hold their ETag. */
  readonly primed?: { readonly devices: number; readonly ms: number };
  /** At the rate the seeded devices make at balena-supervisor's intervals. */
  readonly steady: StepResult;
  /** The ramp, up to and including the first step that did not hold. */
  readonly ramp: readonly StepResult[];
  /** The highest ramp step that held: achieved polls/s and reports/s, in all and per instance. */
  readonly capacity: {
    readonly rate: number;
    readonly pollsPerSecond: number;
    readonly reportsPerSecond: number;
    readonly pollsPerSecondPerInstance: number;
    readonly reportsPerSecondPerInstance: number;
    readonly postgresCpuPercent: number | null;
  } | null;
  /** The first ramp step that did not hold, and why; null when every step up to --max-rate held. */
  readonly saturation: { readonly rate: number; readonly why: string } | null;
}

export interface DevicesResult {
  readonly date: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly postgres: string;
  };
  readonly config: DevicesSettings & { readonly pollJitterS: number };
  /** Requests per second the seeded devices make at those intervals: polls, reports. */
  readonly realRate: { readonly polls: number; readonly reports: number };
  readonly seedMs: number;
  /** Every device's first poll per API (closed loop, all 200): how long it took. */
  readonly primeMs: Readonly<Partial<Record<DeviceApi, number>>>;
  readonly rows: readonly DevicesRow[];
  /** [1, 5, 15]-minute load averages when the run began (`os.loadavg()`). */
  readonly loadAverage?: readonly number[];
  /** The PostgreSQL the run started for itself (bench/postgres-cluster.ts), and its settings. */
  readonly database?: {
    readonly kind: "own primary" | "BENCH_DATABASE_URL";
    readonly settings: Readonly<Record<string, string>>;
    /** pg_basebackup and start of the replica, and its catching up. */
    readonly replicaSetupMs: number | null;
  };
  /** The tables a device has rows in, measured with pg_total_relation_size after the seed and after the run. */
  readonly sizes?: { readonly afterSeed: Sizes; readonly afterRun: Sizes };
  /** One line per API and database of the steady phase on one instance: the figures the README shows first. */
  readonly headline?: readonly HeadlineRow[];
  /** ARCHITECTURE.md's capacity table, by the arithmetic in `scaling.method`. */
  readonly scaling?: Scaling;
}

export interface Sizes {
  /** pg_total_relation_size (table, indexes, TOAST) of each table, bytes. */
  readonly tables: Readonly<Record<string, number>>;
  /** The per-device tables' sum divided by the devices. */
  readonly bytesPerDevice: number;
  readonly databaseBytes: number;
}

export interface HeadlineRow {
  readonly api: DeviceApi;
  readonly database: "primary" | "primary+replica";
  readonly devices: number;
  /** Requests per second sent (the devices' real rate) and answered. */
  readonly offeredPerSecond: number;
  readonly answeredPerSecond: number;
  readonly held: boolean;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly notModifiedShare: number;
  readonly serverCpuUsPerRequest: number;
  readonly serverCpuPercent: number;
  readonly postgresCpuUsPerRequest: number | null;
  readonly primaryCpuUsPerRequest: number | null;
  readonly replicaCpuUsPerRequest: number | null;
  readonly postgresCpuPercent: number | null;
  readonly generatorCpuPercent: number;
  readonly connections: { readonly primary: number; readonly replica: number | null } | null;
  readonly replicaStatementShare: number | null;
  readonly loadAverageAtStart: number | null;
  readonly walBytesPerRequest: number | null;
  readonly commitsPerSecond: number | null;
  readonly walFlushesPerSecond: number | null;
}

export interface ScalingRow {
  readonly devices: number;
  readonly requestsPerSecond: number;
  readonly instances: number;
  readonly primaryCores: number;
  readonly replicaCores: number;
  readonly connectionsPrimary: number;
  readonly connectionsReplica: number;
  /** Each server (primary, and each replica) holds the whole database. */
  readonly diskGB: number;
  /** WAL the primary writes (and each replica receives and replays). */
  readonly walMBPerSecond: number;
}

export interface Scaling {
  readonly method: readonly string[];
  /** The measured inputs, each named after its source field. */
  readonly inputs: Readonly<Record<string, number | null>>;
  /** One primary alone. */
  readonly primaryOnly: readonly ScalingRow[];
  /** Reads on replicas: the primary's and the replicas' cores as measured with one replica. */
  readonly withReplicas: readonly ScalingRow[] | null;
}
