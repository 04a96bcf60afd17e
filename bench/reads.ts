import { isDeepStrictEqual } from "node:util";
import { type LoadResult, load, median, percentile, send, type Target } from "./load.ts";
import { baselineRows, type Peer } from "./peers/peer.ts";
import type { LoadRow, PeerRow, Share } from "./report.ts";
import type { BenchRequest, Caller, Workload } from "./workloads.ts";

export interface ReadSettings {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Keys checked before loading: status, statement count, same JSON as the baseline. */
  readonly probes: number;
  /** An -apollo row against its hand-written request (measureShare): rounds of slices this long. */
  readonly slices: { readonly rounds: number; readonly seconds: number };
}

function medianOf(results: readonly LoadResult[]): LoadResult {
  const pick = (metric: Exclude<keyof LoadResult, "postgresCpuUsPerRequest">) =>
    median(results.map((result) => result[metric]));
  const postgres = results.flatMap((result) => result.postgresCpuUsPerRequest ?? []);
  return {
    rps: pick("rps"),
    p50Ms: pick("p50Ms"),
    p99Ms: pick("p99Ms"),
    cpuUsPerRequest: pick("cpuUsPerRequest"),
    // Only when every round was sampled: a median of some rounds would not be comparable.
    ...(postgres.length === results.length ? { postgresCpuUsPerRequest: median(postgres) } : {}),
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

/** A peer's rows for this workload: its answers to the probes, compared with the baseline's. */
async function probePeer(
  peer: Peer,
  workload: Workload,
  keys: readonly string[],
  baseline: Target,
  count: number,
): Promise<{ sameRows: boolean; problem?: string }> {
  let sameRows = true;
  for (const key of keys.slice(0, count)) {
    const request = peer.request(workload.id, key);
    if (!request) return { sameRows: false, problem: "no equivalent request" };
    const theirs = await send(peer.target, request);
    if (theirs.status !== 200)
      return { sameRows: false, problem: `HTTP ${theirs.status}: ${theirs.body.slice(0, 200)}` };
    const raw = await send(baseline, workload.build(key));
    try {
      const rows = peer.rows(workload.id, JSON.parse(theirs.body));
      if (!isDeepStrictEqual(rows, baselineRows(workload.id, JSON.parse(raw.body)))) sameRows = false;
    } catch (error) {
      return { sameRows: false, problem: (error as Error).message };
    }
  }
  return { sameRows };
}

/** Who answers: fleetgate (with each caller's key), the baseline, and the peers. */
export interface ReadTargets {
  readonly fleetgate: Readonly<Record<Caller, Target>>;
  readonly baseline: Target;
  readonly peers: readonly Peer[];
}

interface Contender {
  readonly target: Target;
  readonly build: (key: string) => BenchRequest;
  readonly results: LoadResult[];
}

const contender = (target: Target, build: (key: string) => BenchRequest): Contender => ({
  target,
  build,
  results: [],
});

/** The peers that have an equivalent of `workload` and answer the probes; the others as rows. */
async function probePeers(
  workload: Workload,
  keys: readonly string[],
  targets: ReadTargets,
  settings: ReadSettings,
  log: (message: string) => void,
) {
  const measured: { peer: Peer; contender: Contender; sameRows: boolean }[] = [];
  const unavailable: PeerRow[] = [];
  for (const peer of targets.peers) {
    if (!peer.request(workload.id, keys[0] as string)) continue;
    const checked = await probePeer(peer, workload, keys, targets.baseline, settings.probes);
    if (checked.problem) {
      log(`${workload.id}: ${peer.label} unavailable (${checked.problem})`);
      unavailable.push({ name: peer.name, label: peer.label, status: "unavailable", note: checked.problem });
      continue;
    }
    const build = (key: string) => peer.request(workload.id, key) as BenchRequest;
    measured.push({ peer, contender: contender(peer.target, build), sameRows: checked.sameRows });
  }
  return { measured, unavailable };
}

/**
 * One read workload and its variants (the same requests from other callers: W1 and W1u): probe,
 * warm every server, then rounds in which each fleetgate caller, the baseline and the peers take
 * turns under the same load, the order rotating from round to round. Each variant's ratio is to
 * the same baseline; the peers are measured on the first variant's id.
 */
export async function measureReads(
  variants: readonly Workload[],
  keys: readonly string[],
  targets: ReadTargets,
  settings: ReadSettings,
  log: (message: string) => void,
): Promise<LoadRow[]> {
  const [first] = variants;
  if (!first) return [];
  const { baseline } = targets;
  const rows = new Map<Workload, LoadRow>();
  const ours = new Map<Workload, { contender: Contender; probe: Probe }>();
  for (const workload of variants) {
    const fleetgate = targets.fleetgate[workload.caller];
    const checked = await probe(workload, keys, fleetgate, baseline, settings.probes);
    if (checked.problem) {
      log(`${workload.id}: unavailable (${checked.problem})`);
      rows.set(workload, { ...header(workload), status: "unavailable", note: checked.problem });
    } else ours.set(workload, { contender: contender(fleetgate, workload.build), probe: checked });
  }
  if (!ours.size) return variants.map((workload) => rows.get(workload) as LoadRow);
  const raw = contender(baseline, first.build);
  const peers = await probePeers(first, keys, targets, settings, log);
  // An -apollo row is measured in slices of its own with its hand-written request (measureShare).
  const rounded = [...ours].filter(([workload]) => !workload.handWritten);
  const contenders = [
    ...rounded.map(([, entry]) => entry.contender),
    raw,
    ...peers.measured.map((entry) => entry.contender),
  ];
  // With only an -apollo row (`--only W4a-apollo`) there are no rounds.
  const rounds = rounded.length ? settings.rounds : 0;
  for (const { target, build } of rounds ? contenders : []) {
    await load(target, build, keys, settings.warmupSeconds, settings.connections);
  }
  for (let round = 0; round < rounds; round++) {
    // Rotate who goes first, so a drift in the machine's load does not favour anyone.
    const order = contenders.map((_, index) => contenders[(index + round) % contenders.length] as Contender);
    for (const { target, build, results } of order) {
      results.push(await load(target, build, keys, settings.seconds, settings.connections));
    }
    const rps = contenders.map((c) => `${c.target.name} ${c.results.at(-1)?.rps.toFixed(0)}`).join(", ");
    log(`${rounded.map(([workload]) => workload.id).join("/")} round ${round + 1}: ${rps} req/s`);
  }
  const baselineResult = medianOf(raw.results);
  const peerRows: PeerRow[] = [...peers.unavailable];
  for (const { peer, contender: measured, sameRows } of peers.measured) {
    const result = medianOf(measured.results);
    peerRows.push({
      name: peer.name,
      label: peer.label,
      status: result.failures ? "failures" : "ok",
      result,
      ratio: result.rps / baselineResult.rps,
      sameRows,
      ...(result.failures ? { note: `${result.failures} failed requests` } : {}),
    });
  }
  for (const [workload, { contender: measured, probe: checked }] of ours) {
    const {
      fleetgate,
      baseline: against,
      share,
    } = workload.handWritten
      ? await measureShare(
          workload,
          workload.handWritten,
          measured.target,
          targets.baseline,
          keys,
          settings,
          log,
        )
      : { fleetgate: medianOf(measured.results), baseline: baselineResult, share: undefined };
    const failures = fleetgate.failures;
    rows.set(workload, {
      ...header(workload),
      status: failures ? "failures" : "ok",
      fleetgate,
      baseline: against,
      ratio: fleetgate.rps / against.rps,
      ...(share ? { share } : {}),
      statements: checked.statements,
      sameJson: checked.sameJson,
      ...(failures ? { note: `${failures} failed requests` } : {}),
      ...(workload === first && peerRows.length ? { peers: peerRows } : {}),
    });
  }
  return variants.map((workload) => rows.get(workload) as LoadRow);
}

/**
 * Issue 47: two requests for one answer (Apollo Client 4's and the hand-written one), each sent to
 * fleetgate and to the baseline, in rounds of short slices, the order rotating. A 5% difference
 * between two ratios is smaller than what the machine drifts between rounds of 8-second runs (a
 * round's share ranged 0.75–1.40 on a 2-core machine), so the four are measured close together
 * and compared in the same slices. `share` is `request`'s ratio ÷ `handWritten`'s ratio, from the
 * medians of the slices; `low`–`high` the quartiles of the rounds' own shares.
 */
async function measureShare(
  request: Workload,
  handWritten: Workload,
  fleetgate: Target,
  baseline: Target,
  keys: readonly string[],
  settings: ReadSettings,
  log: (message: string) => void,
): Promise<{ fleetgate: LoadResult; baseline: LoadResult; share: Share }> {
  const four = [
    contender(fleetgate, handWritten.build),
    contender(baseline, handWritten.build),
    contender(fleetgate, request.build),
    contender(baseline, request.build),
  ] as const;
  for (const { target, build } of four) {
    await load(target, build, keys, settings.warmupSeconds, settings.connections);
  }
  const { rounds, seconds } = settings.slices;
  for (let round = 0; round < rounds; round++) {
    for (let index = 0; index < four.length; index++) {
      const { target, build, results } = four[(index + round) % four.length] as Contender;
      results.push(await load(target, build, keys, seconds, settings.connections));
    }
  }
  const [ours, theirs, oursAsked, theirsAsked] = four;
  const shareOf = (rps: (measured: Contender) => number) =>
    rps(oursAsked) / rps(theirsAsked) / (rps(ours) / rps(theirs));
  const medians = new Map(four.map((measured) => [measured, medianOf(measured.results)]));
  const result = (measured: Contender) => medians.get(measured) as LoadResult;
  const roundShares = Array.from({ length: rounds }, (_, round) =>
    shareOf((measured) => (measured.results[round] as LoadResult).rps),
  );
  const share: Share = {
    value: shareOf((measured) => result(measured).rps),
    low: percentile(roundShares, 25),
    high: percentile(roundShares, 75),
    handWrittenRatio: result(ours).rps / result(theirs).rps,
    slices: `${rounds} × ${seconds} s`,
  };
  log(
    `${request.id}: ${share.value.toFixed(3)} of ${handWritten.id}'s ratio in the same slices (rounds ${share.low.toFixed(2)}–${share.high.toFixed(2)})`,
  );
  return { fleetgate: result(oursAsked), baseline: result(theirsAsked), share };
}

const header = (workload: Workload) => ({
  id: workload.id,
  group: workload.group,
  title: workload.title,
  caller: workload.caller,
});
