import { isDeepStrictEqual } from "node:util";
import { type LoadResult, load, median, send, type Target } from "./load.ts";
import type { LoadRow } from "./report.ts";
import type { Workload } from "./workloads.ts";

export interface ReadSettings {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Keys checked before loading: status, statement count, same JSON as the baseline. */
  readonly probes: number;
}

function medianOf(results: readonly LoadResult[]): LoadResult {
  const pick = (metric: keyof LoadResult) => median(results.map((result) => result[metric]));
  return {
    rps: pick("rps"),
    p50Ms: pick("p50Ms"),
    p99Ms: pick("p99Ms"),
    cpuUsPerRequest: pick("cpuUsPerRequest"),
    requests: results.reduce((sum, result) => sum + result.requests, 0),
    failures: results.reduce((sum, result) => sum + result.failures, 0),
  };
}

interface Probe {
  readonly statements: number;
  readonly sameJson: boolean;
  readonly problem?: string;
}

/** A few requests to both servers before any load: does fleetgate answer, how many statements, same JSON? */
async function probe(
  workload: Workload,
  keys: readonly string[],
  fleetgate: Target,
  baseline: Target,
  count: number,
): Promise<Probe> {
  let statements = 0;
  let sameJson = true;
  for (const key of keys.slice(0, count)) {
    const request = workload.build(key);
    const ours = await send(fleetgate, request);
    if (ours.status !== 200)
      return {
        statements: Number.NaN,
        sameJson: false,
        problem: `HTTP ${ours.status}: ${ours.body.slice(0, 200)}`,
      };
    statements = Math.max(statements, Number(ours.headers.get("x-sql-statements") ?? Number.NaN));
    const theirs = await send(baseline, request);
    if (!isDeepStrictEqual(JSON.parse(ours.body), JSON.parse(theirs.body))) sameJson = false;
  }
  return { statements, sameJson };
}

/** One read workload: probe, warm both servers, then rounds of fleetgate and baseline interleaved. */
export async function measureRead(
  workload: Workload,
  keys: readonly string[],
  fleetgate: Target,
  baseline: Target,
  settings: ReadSettings,
  log: (message: string) => void,
): Promise<LoadRow> {
  const base = { id: workload.id, group: workload.group, title: workload.title };
  const checked = await probe(workload, keys, fleetgate, baseline, settings.probes);
  if (checked.problem) {
    log(`${workload.id}: unavailable (${checked.problem})`);
    return { ...base, status: "unavailable", note: checked.problem };
  }
  const build = (key: string) => workload.build(key);
  for (const target of [fleetgate, baseline]) {
    await load(target, build, keys, settings.warmupSeconds, settings.connections);
  }
  const ours: LoadResult[] = [];
  const theirs: LoadResult[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    // Alternate which goes first, so a drift in the machine's load does not favour either.
    const order = round % 2 ? [baseline, fleetgate] : [fleetgate, baseline];
    for (const target of order) {
      const result = await load(target, build, keys, settings.seconds, settings.connections);
      (target === fleetgate ? ours : theirs).push(result);
    }
    const last = ours.at(-1);
    log(
      `${workload.id} round ${round + 1}: ${last?.rps.toFixed(0)} vs ${theirs.at(-1)?.rps.toFixed(0)} req/s`,
    );
  }
  const fleetgateResult = medianOf(ours);
  const baselineResult = medianOf(theirs);
  return {
    ...base,
    status: fleetgateResult.failures ? "failures" : "ok",
    fleetgate: fleetgateResult,
    baseline: baselineResult,
    ratio: fleetgateResult.rps / baselineResult.rps,
    statements: checked.statements,
    sameJson: checked.sameJson,
    ...(fleetgateResult.failures ? { note: `${fleetgateResult.failures} failed requests` } : {}),
  };
}
