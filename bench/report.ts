import type { EmbeddedMemory } from "./embedded-memory.ts";
import type { Latency, LoadResult } from "./load.ts";

type Status = "ok" | "failures" | "unavailable" | "skipped";

/** A peer (PostGraphile, pinejs) on a throughput workload, in the same rounds, against the same baseline. */
export interface PeerRow {
  readonly name: string;
  readonly label: string;
  readonly status: Status;
  readonly note?: string;
  readonly result?: LoadResult;
  /** peer req/s ÷ baseline req/s. */
  readonly ratio?: number;
  /** Its answers to the probes held the same rows as the baseline's (normalised, compared). */
  readonly sameRows?: boolean;
}

/** A throughput workload (W1, W2, W4): fleetgate against the baseline under the same load. */
export interface LoadRow {
  readonly id: string;
  readonly group: string;
  readonly title: string;
  /** Whose key fleetgate gets: the bench admin, or a member user of the fleets' organization. */
  readonly caller?: "admin" | "user";
  readonly status: Status;
  readonly note?: string;
  readonly fleetgate?: LoadResult;
  readonly baseline?: LoadResult;
  /** fleetgate req/s ÷ baseline req/s. */
  readonly ratio?: number;
  /** An -apollo row's ratio against its hand-written request's, in the same slices (issue 47). */
  readonly share?: Share;
  readonly statements?: number;
  /** Both servers answered the probes with the same JSON (parsed and compared). */
  readonly sameJson?: boolean;
  /** With --peers: the peers that have an equivalent request. */
  readonly peers?: readonly PeerRow[];
}

/** One request's ratio ÷ another's for the same answer, measured in the same slices (reads.ts). */
export interface Share {
  readonly value: number;
  /** The quartiles of the rounds' own shares. */
  readonly low: number;
  readonly high: number;
  /** The hand-written request's ratio in those slices. */
  readonly handWrittenRatio: number;
  /** "12 × 2 s": rounds of slices, each request to each server. */
  readonly slices: string;
}

/** A serial-latency workload (W3, W5): fleetgate's time against the raw one. */
export interface LatencyRow {
  readonly id: string;
  readonly group: string;
  readonly title: string;
  readonly status: Status;
  readonly note?: string;
  readonly fleetgate?: Latency;
  readonly baseline?: Latency;
  /** fleetgate median ÷ raw median. */
  readonly ratio?: number;
  readonly statements?: number;
}

export interface ColdStart {
  /** Spawn to first 200 on /ping, median of the starts. */
  readonly postgresMs: number;
  readonly postgresRuns: readonly number[];
  /** The embedded database's first start: its new data directory (a copy of the template) and every migration. */
  readonly embeddedFirstMs: number;
  readonly embeddedWarmMs: number;
  readonly embeddedWarmRuns: readonly number[];
}

export interface Memory {
  readonly afterReadsMiB: number;
  /** After every load workload, the proxy's fan-out to the largest fleet included. */
  readonly afterAllMiB: number;
  readonly baselineMiB: number;
  /** With --peers: each peer's VmRSS after the read workloads, by name. */
  readonly peersMiB?: Readonly<Record<string, number>>;
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly postgres: string;
  readonly host: string;
}

export interface TargetResult {
  readonly target: string;
  readonly measured: string;
  /** null: not measured in this run (unavailable or skipped). */
  readonly pass: boolean | null;
}

export interface RunResult {
  readonly date: string;
  readonly mode: "quick" | "only" | "full";
  readonly machine: Machine;
  readonly settings: Record<string, unknown>;
  readonly data: { fleets: number; devicesPerFleet: number; generated: boolean; generateSeconds: number };
  readonly loads: readonly LoadRow[];
  readonly latencies: readonly LatencyRow[];
  readonly coldStart?: ColdStart;
  readonly memory?: Memory;
  readonly embeddedMemory?: EmbeddedMemory;
  readonly targets: readonly TargetResult[];
  readonly seconds: number;
}

// Issue 28's targets: ratios to the baseline in the same run, medians of interleaved rounds.
export const targets = {
  /** OData reads, fleetgate ÷ baseline req/s, at least. */
  odata: 0.85,
  /** GraphQL reads, at least. */
  graphql: 0.8,
  /** The same reads as a member of the organization (the `u` rows), at least. */
  member: 0.75,
  odataIds: ["W1", "W2a", "W2b"],
  graphqlIds: ["W4a", "W4b", "W4c"],
  memberIds: ["W1u", "W2au", "W2bu", "W4au", "W4bu", "W4cu"],
  /** Issue 47: Apollo Client 4's request (the `-apollo` rows) ÷ the hand-written one's ratio, at least. */
  apollo: 0.95,
  /** fleetgate's p99 ÷ the baseline's p99, per throughput workload, at most. */
  p99: 2,
  W3: 1.2,
  W5: 1.2,
  W6Ms: 400,
  W7MiB: 150,
  /** W9: the embedded server's RSS from a minute after any start on, under the demo reads. */
  W9MiB: 300,
  /** W8: every nested-count filter's p99, at most (issue 28: no small read takes seconds). */
  W8Ms: 1000,
} as const;

/** The throughput a workload's ratio is held to (its user variant shown against the same line). */
export function throughputTarget(row: { id: string; group: string }): number {
  if (row.id.endsWith("u")) return targets.member;
  return row.group === "W4" ? targets.graphql : targets.odata;
}

/** The measured column of a target: each row's value, or "skipped" when no row ran. */
function listed<Row extends { id: string; status: string }>(
  rows: readonly Row[],
  value: (row: Row) => string,
) {
  return rows.length ? rows.map((row) => `${row.id} ${value(row)}`).join(", ") : "skipped";
}

const ratio = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(2)}×`);

/** Passes when every row ran and `ok` holds for each; null when none ran. */
function verdictOf<Row>(measured: readonly Row[], done: readonly Row[], ok: (row: Row) => boolean) {
  return done.length === 0 ? null : done.length === measured.length && done.every(ok);
}

function atLeast(
  rows: readonly LoadRow[],
  ids: readonly string[],
  minimum: number,
  what: string,
): TargetResult {
  const measured = rows.filter((row) => ids.includes(row.id));
  const done = measured.filter((row) => row.ratio !== undefined);
  return {
    target: `${what} ${ids.join(", ")} ≥ ${minimum}× baseline throughput`,
    measured: listed(measured, (row) => (row.ratio === undefined ? row.status : ratio(row.ratio))),
    pass: verdictOf(measured, done, (row) => (row.ratio as number) >= minimum),
  };
}

/** Each `-apollo` row's ratio against its hand-written request's, in the same slices (issue 47). */
function apolloAlike(rows: readonly LoadRow[], minimum: number): TargetResult {
  const measured = rows.filter((row) => row.id.endsWith("-apollo"));
  const done = measured.filter((row) => row.share !== undefined);
  const shown = ({ id, ratio: own, share, status }: LoadRow) =>
    share
      ? `${id} ${ratio(own)} (${share.value.toFixed(2)} of ${ratio(share.handWrittenRatio)}; rounds ${share.low.toFixed(2)}–${share.high.toFixed(2)}, ${share.slices})`
      : `${id} ${status}`;
  return {
    target: `GraphQL with Apollo Client 4's request ≥ ${minimum}× the hand-written request's ratio`,
    measured: measured.length ? measured.map(shown).join(", ") : "skipped",
    pass: verdictOf(measured, done, (row) => (row.share as Share).value >= minimum),
  };
}

function p99Within(rows: readonly LoadRow[], factor: number): TargetResult {
  const done = rows.filter((row) => row.fleetgate && row.baseline);
  const p99 = (row: LoadRow) => (row.fleetgate?.p99Ms ?? 0) / (row.baseline?.p99Ms || 1);
  return {
    target: `p99 latency ≤ ${factor}× the baseline's p99, per throughput workload`,
    measured: listed(rows, (row) =>
      row.fleetgate && row.baseline
        ? `${row.fleetgate.p99Ms.toFixed(1)}/${row.baseline.p99Ms.toFixed(1)} ms`
        : row.status,
    ),
    pass: verdictOf(rows, done, (row) => p99(row) <= factor),
  };
}

function oneStatement(rows: readonly LoadRow[], groups: readonly string[], what: string): TargetResult {
  const measured = rows.filter((row) => groups.includes(row.group));
  const done = measured.filter((row) => row.statements !== undefined);
  return {
    target: `exactly 1 SQL statement per ${what}`,
    measured: listed(measured, (row) => String(row.statements ?? row.status)),
    pass: verdictOf(measured, done, (row) => row.statements === 1),
  };
}

function atMost(
  rows: readonly LatencyRow[],
  group: "W3" | "W5",
  maximum: number,
  what: string,
): TargetResult {
  const measured = rows.filter((row) => row.group === group);
  const done = measured.filter((row) => row.ratio !== undefined);
  return {
    target: `${group} ≤ ${maximum}× ${what}`,
    measured: listed(measured, (row) => (row.ratio === undefined ? row.status : ratio(row.ratio))),
    pass: verdictOf(measured, done, (row) => (row.ratio as number) <= maximum),
  };
}

function latencyWithin(
  rows: readonly LatencyRow[],
  group: "W8",
  maximumMs: number,
  what: string,
): TargetResult {
  const measured = rows.filter((row) => row.group === group);
  const done = measured.filter((row) => row.fleetgate !== undefined);
  return {
    target: `${group} p99 ≤ ${maximumMs} ms, ${what}`,
    measured: listed(measured, (row) =>
      row.fleetgate ? `${row.fleetgate.p99Ms.toFixed(0)} ms` : row.status,
    ),
    pass: verdictOf(measured, done, (row) => (row.fleetgate?.p99Ms as number) <= maximumMs),
  };
}

export function evaluate(result: Omit<RunResult, "targets">): TargetResult[] {
  const { loads, latencies, coldStart, memory, embeddedMemory } = result;
  const embeddedPeak = embeddedMemory
    ? Math.max(embeddedMemory.firstStartPeakMiB, embeddedMemory.warmStartPeakMiB)
    : undefined;
  return [
    atLeast(loads, targets.odataIds, targets.odata, "OData"),
    atLeast(loads, targets.graphqlIds, targets.graphql, "GraphQL"),
    atLeast(loads, targets.memberIds, targets.member, "A member's"),
    apolloAlike(loads, targets.apollo),
    oneStatement(loads, ["W1", "W2"], "OData GET"),
    oneStatement(loads, ["W4"], "GraphQL query"),
    p99Within(loads, targets.p99),
    atMost(latencies, "W3", targets.W3, "raw UPDATE latency"),
    atMost(latencies, "W5", targets.W5, "raw fan-out time, at every N"),
    latencyWithin(latencies, "W8", targets.W8Ms, "every caller (nested counts and paths)"),
    {
      target: `W6 cold start ≤ ${targets.W6Ms} ms on PostgreSQL`,
      measured: coldStart ? `${coldStart.postgresMs.toFixed(0)} ms` : "skipped",
      pass: coldStart ? coldStart.postgresMs <= targets.W6Ms : null,
    },
    {
      target: `W7 resident memory ≤ ${targets.W7MiB} MiB after all workloads`,
      measured: memory ? `${memory.afterAllMiB.toFixed(0)} MiB` : "skipped",
      pass: memory ? memory.afterAllMiB <= targets.W7MiB : null,
    },
    {
      target: `W9 embedded resident memory ≤ ${targets.W9MiB} MiB from a minute after any start, under load`,
      measured: embeddedPeak === undefined ? "skipped" : `${embeddedPeak.toFixed(0)} MiB`,
      pass: embeddedPeak === undefined ? null : embeddedPeak <= targets.W9MiB,
    },
  ];
}

const n0 = (value: number | undefined) => (value === undefined ? "–" : value.toFixed(0));
const n1 = (value: number | undefined) => (value === undefined ? "–" : value.toFixed(1));
const verdict = (pass: boolean | null) => (pass === null ? "not measured" : pass ? "**pass**" : "**FAIL**");

function loadTable(rows: readonly LoadRow[]): string[] {
  const lines = [
    "| workload | fleetgate req/s | p50 ms | p99 ms | CPU µs/req | PG µs/req | SQL/req | baseline req/s | p50 ms | p99 ms | CPU µs/req | PG µs/req | ratio |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const row of rows) {
    const f = row.fleetgate;
    const b = row.baseline;
    const note =
      row.status === "ok"
        ? row.sameJson === false
          ? " (JSON differs from baseline)"
          : ""
        : ` (${row.status}${row.note ? `: ${row.note}` : ""})`;
    lines.push(
      `| ${row.id} ${row.title}${note} | ${n0(f?.rps)} | ${n1(f?.p50Ms)} | ${n1(f?.p99Ms)} | ${n0(f?.cpuUsPerRequest)} | ${n0(f?.postgresCpuUsPerRequest)} | ${row.statements ?? "–"} | ${n0(b?.rps)} | ${n1(b?.p50Ms)} | ${n1(b?.p99Ms)} | ${n0(b?.cpuUsPerRequest)} | ${n0(b?.postgresCpuUsPerRequest)} | ${ratio(row.ratio)} |`,
    );
  }
  return lines;
}

/** With --peers: each peer's row beside fleetgate's and the baseline's, in the same rounds. */
function peerTable(rows: readonly LoadRow[]): string[] {
  const measured = rows.filter((row) => row.peers?.length);
  if (!measured.length) return [];
  const lines = [
    "Peers, in the same interleaved rounds as fleetgate and the baseline; ratio = peer ÷ baseline req/s, beside fleetgate's. Same rows: the probes' answers, normalised, hold the baseline's rows.",
    "",
    "| workload | peer | req/s | p50 ms | p99 ms | CPU µs/req | PG µs/req | same rows | peer ratio | fleetgate ratio |",
    "|---|---|--:|--:|--:|--:|--:|---|--:|--:|",
  ];
  for (const row of measured) {
    for (const peer of row.peers ?? []) {
      const r = peer.result;
      const note = peer.status === "ok" ? "" : ` (${peer.status}${peer.note ? `: ${peer.note}` : ""})`;
      const same = peer.sameRows === undefined ? "–" : peer.sameRows ? "yes" : "**no**";
      lines.push(
        `| ${row.id} ${row.title} | ${peer.label}${note} | ${n0(r?.rps)} | ${n1(r?.p50Ms)} | ${n1(r?.p99Ms)} | ${n0(r?.cpuUsPerRequest)} | ${n0(r?.postgresCpuUsPerRequest)} | ${same} | ${ratio(peer.ratio)} | ${ratio(row.ratio)} |`,
      );
    }
  }
  return [...lines, ""];
}

function latencyTable(rows: readonly LatencyRow[]): string[] {
  const lines = [
    "| workload | fleetgate p50 ms | p99 ms | CPU µs/req | SQL/req | raw p50 ms | p99 ms | CPU µs/req | ratio (p50) |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const row of rows) {
    const f = row.fleetgate;
    const b = row.baseline;
    const note = row.status === "ok" ? "" : ` (${row.status}${row.note ? `: ${row.note}` : ""})`;
    lines.push(
      `| ${row.id} ${row.title}${note} | ${n1(f?.p50Ms)} | ${n1(f?.p99Ms)} | ${n0(f?.cpuUsPerRequest)} | ${row.statements ?? "–"} | ${n1(b?.p50Ms)} | ${n1(b?.p99Ms)} | ${n0(b?.cpuUsPerRequest)} | ${ratio(row.ratio)} |`,
    );
  }
  return lines;
}

export function markdown(result: RunResult): string {
  const { machine, coldStart, memory } = result;
  return [
    `# fleetgate benchmark, ${result.date.slice(0, 16).replace("T", " ")} UTC (${result.mode})`,
    "",
    `Machine: ${machine.host}, ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB; Node ${machine.node}; ${machine.postgres}. ` +
      `Data: ${result.data.fleets} fleets × ${result.data.devicesPerFleet} devices (${result.data.generated ? `generated in ${result.data.generateSeconds.toFixed(1)} s` : "reused"}). ` +
      `Run took ${(result.seconds / 60).toFixed(1)} min.`,
    "",
    "Throughput: medians of interleaved rounds in which fleetgate, the raw `node:http` + `pg` baseline (and with --peers, PostGraphile and pinejs) take turns under the same load; ratio = fleetgate ÷ baseline req/s. CPU µs/req is the server process's CPU per request, PG µs/req PostgreSQL's (the backends of the server's database and PostgreSQL's background processes; – when PostgreSQL runs on another machine). The -apollo rows are medians of short slices of their own, taken in turn with their hand-written request on both servers (issue 47's comparison, in the targets below).",
    "",
    ...loadTable(result.loads),
    "",
    ...(result.loads.some((row) => row.caller === "user")
      ? [
          "The `u` rows (W1u, W2au, W2bu) send the same requests with the key of a normal user, a member of the organization owning every bench fleet (the same rows, through a member's permission predicate), in the same rounds as the admin's row above them and against the same baseline.",
          "",
        ]
      : []),
    ...peerTable(result.loads),
    ...(result.latencies.length
      ? [
          "Latency, serial requests (W3 bulk PATCH of 1,000 rows against the raw UPDATE; W5 proxy `/ping` fan-out against a raw keep-alive fan-out; W8 filters with nested counts and paths, held to a time rather than to a raw equivalent); ratio = fleetgate ÷ raw median.",
          "",
          ...latencyTable(result.latencies),
          "",
        ]
      : ["W3, W5, W8 latency: skipped.", ""]),
    coldStart
      ? `W6 cold start, spawn to first 200 on /ping: PostgreSQL ${n0(coldStart.postgresMs)} ms (runs ${coldStart.postgresRuns.map(n0).join(", ")}); embedded warm ${n0(coldStart.embeddedWarmMs)} ms (runs ${coldStart.embeddedWarmRuns.map(n0).join(", ")}), first start on a new data directory ${n0(coldStart.embeddedFirstMs)} ms.`
      : "W6 cold start: skipped.",
    "",
    memory
      ? `W7 resident memory (VmRSS) of the server: ${n0(memory.afterReadsMiB)} MiB after the read workloads, ${n0(memory.afterAllMiB)} MiB after all load; the baseline ${n0(memory.baselineMiB)} MiB${Object.entries(
          memory.peersMiB ?? {},
        )
          .map(([name, mib]) => `; ${name} ${n0(mib)} MiB after the reads`)
          .join("")}.`
      : "W7 resident memory: skipped.",
    "",
    result.embeddedMemory
      ? `W9 the embedded database (PGlite), demo data: first start ${n0(result.embeddedMemory.firstStartMs)} ms to /ping, ${n0(result.embeddedMemory.afterFirstStartMiB)} MiB then, ${n0(result.embeddedMemory.afterSeedMiB)} MiB after the demo seed, at most ${n0(result.embeddedMemory.firstStartPeakMiB)} MiB (${n0(result.embeddedMemory.firstStartUnderLoadMiB)} at the end) under W1 and W2 from a minute after the start; restarted on its data, at most ${n0(result.embeddedMemory.warmStartPeakMiB)} MiB (${n0(result.embeddedMemory.warmStartUnderLoadMiB)} at the end) under the same reads from a minute after the restart. In the minute after each start (its own work, the seed, V8 compiling PGlite's hot functions): at most ${n0(result.embeddedMemory.firstStartTransientMiB)} MiB after the first start, ${n0(result.embeddedMemory.warmStartTransientMiB)} MiB after the restart.`
      : "W9 embedded memory: skipped.",
    "",
    "| target | measured | result |",
    "|---|---|---|",
    ...result.targets.map((t) => `| ${t.target} | ${t.measured} | ${verdict(t.pass)} |`),
    "",
  ].join("\n");
}
