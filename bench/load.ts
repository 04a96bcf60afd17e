import autocannon from "autocannon";
import { PostgresCpu } from "./postgres-cpu.ts";
import { cpuMicros } from "./processes.ts";
import type { BenchRequest } from "./workloads.ts";

/** A server under measurement: where it listens and which process does its work. */
export interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** Sent with every request (fleetgate's credential; nothing for the baseline). */
  readonly headers: Readonly<Record<string, string>>;
  /** PostgreSQL's processes serving this server's database, sampled around a load run. */
  readonly postgres?: PostgresCpu;
}

export interface Latency {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Server CPU (user + system) per completed request, from /proc around the run. */
  readonly cpuUsPerRequest: number;
  /**
   * PostgreSQL's CPU per completed request: its backends on the server's database and its
   * background processes. Absent when PostgreSQL runs on another machine or was not sampled.
   */
  readonly postgresCpuUsPerRequest?: number;
  readonly requests: number;
  readonly failures: number;
}

/**
 * Closed-loop load for `seconds`: each of `connections` keep-alive connections sends the next
 * request as soon as the last is answered, each request built from the next key in turn.
 */
export async function load(
  target: Target,
  build: (key: string) => BenchRequest,
  keys: readonly string[],
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  let next = Math.floor(Math.random() * keys.length);
  const postgresBefore = await target.postgres?.sample();
  const cpuBefore = cpuMicros(target.pid);
  // autocannon's own histogram keeps whole milliseconds, too coarse for a p99 of about a
  // millisecond compared at 2×; its 'response' event gives each answer's time at hrtime precision.
  const latencies: number[] = [];
  const run = autocannon({
    url: target.url,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const built = build(keys[next++ % keys.length] as string);
          return {
            ...request,
            method: built.method,
            path: built.path,
            headers: { ...target.headers, ...built.headers },
            ...(built.body === undefined ? {} : { body: built.body }),
          };
        },
      },
    ],
  });
  run.on("response", (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await run;
  const cpu = cpuMicros(target.pid) - cpuBefore;
  const postgresUs =
    target.postgres && postgresBefore
      ? PostgresCpu.between(postgresBefore, await target.postgres.sample())
      : undefined;
  const completed = result["2xx"] + result.non2xx;
  return {
    rps: result["2xx"] / result.duration,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuUsPerRequest: completed ? cpu / completed : 0,
    ...(postgresUs === undefined ? {} : { postgresCpuUsPerRequest: completed ? postgresUs / completed : 0 }),
    requests: completed,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
  readonly ms: number;
}

/** One request, timed from send to the last byte of the body. */
export async function send(target: Target, request: BenchRequest): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${target.url}${request.path}`, {
    method: request.method,
    headers: { ...target.headers, ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const body = await response.text();
  return { status: response.status, body, headers: response.headers, ms: performance.now() - started };
}

/** `count` requests one after the other; the latencies in ms, and the server CPU per request. */
export async function serial(
  target: Target,
  build: (index: number) => BenchRequest,
  count: number,
  check: (answer: Answer) => void,
): Promise<{ latencies: number[]; cpuUsPerRequest: number }> {
  const latencies: number[] = [];
  const cpuBefore = cpuMicros(target.pid);
  for (let i = 0; i < count; i++) {
    const answer = await send(target, build(i));
    try {
      check(answer);
    } catch (error) {
      throw new Error(`${target.name}: ${(error as Error).message}`);
    }
    latencies.push(answer.ms);
  }
  return { latencies, cpuUsPerRequest: (cpuMicros(target.pid) - cpuBefore) / count };
}

export interface SerialSettings {
  readonly rounds: number;
  /** Requests per server per round. */
  readonly requests: number;
}

/**
 * Serial latency of fleetgate and the baseline: three unmeasured calls each (they open the
 * connections), then rounds of `settings.requests` each, the order alternating between rounds.
 */
export async function serialPair(
  fleetgate: Target,
  baseline: Target,
  build: (index: number) => BenchRequest,
  check: (answer: Answer) => void,
  settings: SerialSettings,
  onRound: (fleetgate: number, baseline: number, round: number) => void = () => {},
): Promise<{ fleetgate: Latency; baseline: Latency }> {
  const samples = { fleetgate: [] as number[], baseline: [] as number[] };
  const cpu = { fleetgate: [] as number[], baseline: [] as number[] };
  for (const target of [fleetgate, baseline]) await serial(target, build, 3, check);
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 ? [baseline, fleetgate] : [fleetgate, baseline];
    for (const target of order) {
      const side = target === fleetgate ? "fleetgate" : "baseline";
      const { latencies, cpuUsPerRequest } = await serial(target, build, settings.requests, check);
      samples[side].push(...latencies);
      cpu[side].push(cpuUsPerRequest);
    }
    onRound(median(samples.fleetgate), median(samples.baseline), round);
  }
  const summary = (side: "fleetgate" | "baseline"): Latency => ({
    p50Ms: median(samples[side]),
    p99Ms: percentile(samples[side], 99),
    cpuUsPerRequest: median(cpu[side]),
  });
  return { fleetgate: summary("fleetgate"), baseline: summary("baseline") };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
