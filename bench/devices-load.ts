import { Agent, request } from "node:http";
import { deviceKey, deviceUuid, fleetOf, type Seeded } from "./devices-seed.ts";

// Lightweight simulated supervisors: a million devices are a few numbers each (their uuid and key
// are computed from their number, their last ETag per API is 64 bytes of a shared buffer), and
// their requests go out over a few keep-alive connections per fleetgate instance, as they would
// arrive through a load balancer. The load is open-loop: requests are sent at the times a rate
// gives them, whether or not earlier ones have been answered, and each one's latency counts from
// that intended time, so a server (or a generator) that falls behind shows in the latencies
// instead of quietly lowering the load (no coordinated omission).

export type DeviceApi = "v2" | "v3";
export type Kind = "poll" | "report";

/** What came back: the status (0: no answer), the ETag, or the connection's error. */
interface Outcome {
  readonly status: number;
  readonly etag: string | undefined;
  readonly error: string | undefined;
}

export interface KindStats {
  readonly sent: number;
  /** Answered 200 (polls: with a body; reports: stored). */
  readonly ok: number;
  /** Polls answered 304 Not Modified. */
  readonly notModified: number;
  /** Anything else: another status, a connection error, a time-out, or not sent (too many in flight). */
  readonly errors: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface PhaseStats {
  readonly seconds: number;
  readonly polls: KindStats;
  readonly reports: KindStats;
  /** Up to five distinct error texts, for the log. */
  readonly why: readonly string[];
  /** CPU time (user + system) of the load process(es) during the phase. */
  readonly generatorCpuMicros: number;
}

interface Counts {
  sent: number;
  ok: number;
  notModified: number;
  errors: number;
}

/** One load process's phase before it is summarised: counts and every latency, so processes merge. */
export interface RawPhase {
  readonly seconds: number;
  readonly counts: Readonly<Record<Kind, Counts>>;
  readonly samples: Readonly<Record<Kind, number[]>>;
  readonly why: readonly string[];
  readonly cpuMicros: number;
}

/** The share of the devices one load process drives: devices index + 1, index + 1 + of, … */
export interface Partition {
  readonly index: number;
  readonly of: number;
}

/** What drives the devices: this process (`SimulatedDevices`) or several (devices-load-processes.ts). */
export interface DeviceLoad {
  /**
   * The next `count` devices in poll order (all, when `count` is undefined or larger) poll once,
   * closed loop, so they hold their current ETag; the poll order does not move.
   */
  prime(
    bases: readonly string[],
    api: DeviceApi,
    concurrency: number,
    count?: number,
  ): Promise<{ ms: number; failed: string[] }>;
  run(bases: readonly string[], api: DeviceApi, rates: Rates, seconds: number): Promise<PhaseStats>;
  close(): Promise<void>;
}

export interface Rates {
  readonly poll: number;
  readonly report: number;
}

// A fleetgate ETag is a quoted 32-character base64url hash (src/devices/target.ts `targetEtag`):
// 34 bytes. A slot holds its length in its first byte and up to 63 bytes of ETag, so a change of
// format (a weak `W/` ETag, a longer hash) does not break the bench.
const ETAG_BYTES = 64;
const TIMEOUT_MS = 10_000;
// Beyond this many requests in flight an arrival is counted as an error instead of sent: the
// server is far past saturation, and the generator would only run out of memory.
const MAX_IN_FLIGHT = 20_000;

/** A permutation of 0…n−1 (k ↦ k·step mod n, step coprime with n): devices in a scattered order. */
function scatter(n: number, seed: number): (k: number) => number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let step = (seed % n) + 1;
  while (gcd(step, n) !== 1) step++;
  return (k) => Number((BigInt(k) * BigInt(step)) % BigInt(n));
}

/** The devices' side of the bench: who they are, what they last saw, where they send. */
export class SimulatedDevices implements DeviceLoad {
  private readonly etags = new Map<DeviceApi, Buffer>();
  private readonly pollOrder: (k: number) => number;
  private readonly reportOrder: (k: number) => number;
  /** Per API: how far its polls have gone in the poll order (each API's devices hold their own ETags). */
  private readonly pollCursor: Record<DeviceApi, number> = { v2: 0, v3: 0 };
  private reportCursor = 0;
  private changes = 0;
  private readonly agents = new Map<string, Agent>();

  constructor(
    private readonly seeded: Seeded,
    /** Keep-alive connections per instance. */
    private readonly connections: number,
    /** One report in this many changes the device's state (status, running release); the rest carry metrics. */
    private readonly changeEvery: number,
    private readonly partition: Partition = { index: 0, of: 1 },
  ) {
    this.pollOrder = scatter(this.count, 2_654_435_761);
    this.reportOrder = scatter(this.count, 40_503);
  }

  /** How many devices this process drives; its i-th (from 0) is device `device(i)`. */
  get count(): number {
    return Math.floor((this.seeded.devices - 1 - this.partition.index) / this.partition.of) + 1;
  }

  private device(i: number): number {
    return i * this.partition.of + this.partition.index + 1;
  }

  private agent(base: string): Agent {
    let agent = this.agents.get(base);
    if (!agent) {
      agent = new Agent({ keepAlive: true, maxSockets: this.connections });
      this.agents.set(base, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private etag(api: DeviceApi, i: number): string | undefined {
    const buffer = this.etags.get(api);
    const length = buffer?.[i * ETAG_BYTES] ?? 0;
    if (!buffer || length === 0) return undefined;
    return buffer.toString("latin1", i * ETAG_BYTES + 1, i * ETAG_BYTES + 1 + length);
  }

  private remember(api: DeviceApi, i: number, etag: string): void {
    if (etag.length === 0 || etag.length >= ETAG_BYTES) throw new Error(`unexpected ETag ${etag}`);
    let buffer = this.etags.get(api);
    if (!buffer) {
      buffer = Buffer.alloc(this.count * ETAG_BYTES);
      this.etags.set(api, buffer);
    }
    buffer[i * ETAG_BYTES] = etag.length;
    buffer.write(etag, i * ETAG_BYTES + 1, "latin1");
  }

  private send(
    base: string,
    method: string,
    path: string,
    key: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Outcome> {
    return new Promise((resolve) => {
      const url = new URL(base);
      const outgoing = request(
        {
          agent: this.agent(base),
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${key}`,
            ...headers,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          timeout: TIMEOUT_MS,
        },
        (response) => {
          response.resume();
          response.on("end", () => {
            const etag = response.headers.etag;
            resolve({ status: response.statusCode ?? 0, etag, error: undefined });
          });
        },
      );
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)));
      outgoing.on("error", (error) => resolve({ status: 0, etag: undefined, error: error.message }));
      outgoing.end(body);
    });
  }

  /**
   * This process's device `i` polls its target with the ETag it holds, as balena-supervisor's
   * `poll.ts` does; `"ok"` (200, a new ETag kept), `"not-modified"` (304) or an error text.
   */
  private async poll(base: string, api: DeviceApi, i: number): Promise<"ok" | "not-modified" | string> {
    const n = this.device(i);
    const uuid = deviceUuid(n);
    const etag = this.etag(api, i);
    const outcome = await this.send(
      base,
      "GET",
      `/device/${api}/${uuid}/state`,
      deviceKey(this.seeded.salt, n),
      etag === undefined ? {} : { "if-none-match": etag },
    );
    if (outcome.error !== undefined) return outcome.error;
    if (outcome.status === 304 && etag !== undefined) return "not-modified";
    if (outcome.status !== 200) return `poll: HTTP ${outcome.status}`;
    if (outcome.etag === undefined) return "poll: 200 without an ETag";
    this.remember(api, i, outcome.etag);
    return "ok";
  }

  /** Device `i` reports its state: metrics, or (one in `changeEvery`) a changed status and release. */
  private async report(base: string, api: DeviceApi, i: number): Promise<"ok" | string> {
    const n = this.device(i);
    const uuid = deviceUuid(n);
    const fleet = fleetOf(this.seeded.fleets, n);
    const change = ++this.changes % this.changeEvery === 0;
    const metrics = {
      cpu_usage: n % 100,
      cpu_temp: 40 + (this.changes % 20),
      memory_usage: 200 + (this.changes % 300),
      memory_total: 1024,
    };
    const state = change ? { ...metrics, status: this.changes % 2 === 0 ? "Idle" : "Downloading" } : metrics;
    const body =
      api === "v2"
        ? { ...state, ...(change ? { commit: fleet.commit } : {}) }
        : {
            [uuid]: {
              ...state,
              ...(change ? { apps: { [fleet.uuid]: { release_uuid: fleet.commit } } } : {}),
            },
          };
    const outcome = await this.send(
      base,
      "PATCH",
      api === "v2" ? `/device/v2/${uuid}/state` : "/device/v3/state",
      deviceKey(this.seeded.salt, n),
      {},
      JSON.stringify(body),
    );
    if (outcome.error !== undefined) return outcome.error;
    return outcome.status === 200 ? "ok" : `report: HTTP ${outcome.status}`;
  }

  /**
   * Every device (or the next `count` in poll order) polls once, `concurrency` at a time over the
   * instances (closed loop), so each holds the ETag of its current target as a device that has been
   * running does. Answers how long it took and what failed.
   */
  async prime(
    bases: readonly string[],
    api: DeviceApi,
    concurrency: number,
    count?: number,
  ): Promise<{ ms: number; failed: string[] }> {
    const started = performance.now();
    const failed: string[] = [];
    const all = count === undefined || count >= this.count;
    const total = all ? this.count : count;
    let next = 0;
    const worker = async (lane: number) => {
      while (next < total) {
        const k = next++;
        const i = all ? k : this.pollOrder((this.pollCursor[api] + k) % this.count);
        const outcome = await this.poll(bases[lane % bases.length] as string, api, i);
        if (outcome !== "ok" && outcome !== "not-modified" && failed.length < 5)
          failed.push(`device ${this.device(i)}: ${outcome}`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, lane) => worker(lane)));
    return { ms: performance.now() - started, failed };
  }

  async run(bases: readonly string[], api: DeviceApi, rates: Rates, seconds: number): Promise<PhaseStats> {
    return summarise([await this.runRaw(bases, api, rates, seconds)], seconds);
  }

  /**
   * Open-loop load for `seconds`: polls at `rates.poll` and reports at `rates.report` per second,
   * each at its own evenly spaced intended time, to the next device of a scattered order, spread
   * over `bases` in turn.
   */
  async runRaw(bases: readonly string[], api: DeviceApi, rates: Rates, seconds: number): Promise<RawPhase> {
    const samples: Record<Kind, number[]> = { poll: [], report: [] };
    const counts: Record<Kind, Counts> = {
      poll: { sent: 0, ok: 0, notModified: 0, errors: 0 },
      report: { sent: 0, ok: 0, notModified: 0, errors: 0 },
    };
    const why = new Set<string>();
    let inFlight = 0;
    let target = 0;
    const pending: Promise<void>[] = [];
    const issue = (kind: Kind, intended: number) => {
      const count = counts[kind];
      count.sent++;
      if (inFlight >= MAX_IN_FLIGHT) {
        count.errors++;
        why.add(`more than ${MAX_IN_FLIGHT} requests in flight`);
        return;
      }
      const base = bases[target++ % bases.length] as string;
      const i =
        kind === "poll"
          ? this.pollOrder(this.pollCursor[api]++ % this.count)
          : this.reportOrder(this.reportCursor++ % this.count);
      inFlight++;
      const sent = kind === "poll" ? this.poll(base, api, i) : this.report(base, api, i);
      pending.push(
        sent.then((outcome) => {
          inFlight--;
          samples[kind].push(performance.now() - intended);
          if (outcome === "ok") count.ok++;
          else if (outcome === "not-modified") count.notModified++;
          else {
            count.errors++;
            if (why.size < 5) why.add(outcome);
          }
        }),
      );
    };
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const end = started + seconds * 1000;
    const issued = { poll: 0, report: 0 };
    // Each tick sends every request whose intended time has come; a late tick sends them late,
    // and their latency counts from when they were due.
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = Math.min(performance.now(), end);
        for (const kind of ["poll", "report"] as const) {
          const rate = rates[kind];
          if (rate <= 0) continue;
          // Request k is due at k / rate (the first at once), and the phase holds those before its end.
          const due = Math.min(Math.floor(((now - started) / 1000) * rate) + 1, Math.ceil(seconds * rate));
          while (issued[kind] < due) {
            issue(kind, started + (issued[kind] / rate) * 1000);
            issued[kind]++;
          }
        }
        if (performance.now() >= end) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    await Promise.all(pending);
    const cpu = process.cpuUsage(cpuBefore);
    return {
      seconds: (performance.now() - started) / 1000,
      counts,
      samples,
      why: [...why],
      cpuMicros: cpu.user + cpu.system,
    };
  }
}

/** One phase's statistics from what one or more load processes saw in it. */
export function summarise(raws: readonly RawPhase[], seconds: number): PhaseStats {
  const stats = (kind: Kind): KindStats => {
    const sorted = raws.flatMap((raw) => raw.samples[kind]).sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
    const count = { sent: 0, ok: 0, notModified: 0, errors: 0 };
    for (const raw of raws)
      for (const key of Object.keys(count) as (keyof Counts)[]) count[key] += raw.counts[kind][key];
    return {
      ...count,
      perSecond: round((count.ok + count.notModified) / seconds, 1),
      p50Ms: round(at(0.5), 1),
      p99Ms: round(at(0.99), 1),
      maxMs: round(sorted.at(-1) ?? 0, 1),
    };
  };
  return {
    seconds: round(Math.max(...raws.map((raw) => raw.seconds)), 2),
    polls: stats("poll"),
    reports: stats("report"),
    why: [...new Set(raws.flatMap((raw) => raw.why))].slice(0, 5),
    generatorCpuMicros: raws.reduce((total, raw) => total + raw.cpuMicros, 0),
  };
}

export const round = (value: number, digits = 0): number => Number(value.toFixed(digits));
