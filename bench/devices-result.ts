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
  /** Each instance used: CPU (percent of one core) and RSS at the end; CPU µs per answered request, all instances. */
  readonly servers: {
    readonly cpuPercent: readonly number[];
    readonly rssMiB: readonly number[];
    readonly cpuUsPerRequest: number;
  };
  /** PostgreSQL's processes (this database's backends and the server's own); null when not on this machine. */
  readonly postgres: { readonly cpuPercent: number; readonly cpuUsPerRequest: number } | null;
  /** The load processes' CPU (percent of one core, summed): near 100 per process, they are the bottleneck. */
  readonly generatorCpuPercent: number;
}

export interface DevicesRow {
  readonly api: DeviceApi;
  readonly instances: number;
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
}
