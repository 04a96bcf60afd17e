// `npm run bench [-- --quick] [-- --only W1,W5] [-- --peers]`: the whole benchmark of issues 11,
// 22 and 28, end to end. --peers also starts PostGraphile 5 and pinejs 23 (bench/peers/) and measures
// them on the workloads they have an equivalent of (W1, W2a, W2b; PostGraphile also W4d).
// See the README's Performance section for what it measures and how to read the results.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, hostname, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { measureBulkPatch } from "./bulk.ts";
import { chart } from "./chart.ts";
import { measureColdStart } from "./coldstart.ts";
import { createAdminKey, createMemberKey, DEVICES_PER_FLEET, FLEETS, prepareData } from "./data.ts";
import { type EmbeddedMemory, measureEmbeddedMemory } from "./embedded-memory.ts";
import type { SerialSettings, Target } from "./load.ts";
import { measureNestedFilters } from "./nested.ts";
import { resultsDir } from "./paths.ts";
import { PEER_WORKLOADS, type Peer } from "./peers/peer.ts";
import { startPinejs } from "./peers/pinejs.ts";
import { startPostgraphile } from "./peers/postgraphile.ts";
import { PostgresCpu } from "./postgres-cpu.ts";
import { type Child, rssBytes, startChild, startFleetgate } from "./processes.ts";
import { measureFanOut, type SimulatedFleet, startProxyFleets, stopProxyFleets } from "./proxy.ts";
import { measureReads, type ReadSettings } from "./reads.ts";
import {
  type ColdStart,
  evaluate,
  type LatencyRow,
  type LoadRow,
  type Machine,
  type Memory,
  markdown,
  type RunResult,
} from "./report.ts";
import { ALIASES, type Workload, workloads } from "./workloads.ts";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    peers: { type: "boolean", default: false },
    // Rounds of each read workload (default 3): more narrow the median where two rows are compared
    // closely (the -apollo rows against their hand-written ones, issue 47).
    "read-rounds": { type: "string" },
  },
});
const quick = flags.quick as boolean;
const withPeers = flags.peers as boolean;
// --only names groups (W1 runs W1 and W1u) or single workloads (W2au).
const only = flags.only ? new Set(flags.only.split(",").map((name) => name.trim())) : undefined;
const wanted = (group: string, id = group) => !only || only.has(group) || only.has(id);

const databaseUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/fleetgate_bench";
// fleetgate's own default (src/config.ts), given to both servers explicitly so they always match.
const poolSize = Number(process.env.DATABASE_POOL_SIZE || 2 * availableParallelism());
const MiB = 1024 * 1024;

const readRounds = flags["read-rounds"] ? Number(flags["read-rounds"]) : 3;
if (!Number.isInteger(readRounds) || readRounds < 1)
  throw new Error("--read-rounds takes a whole number ≥ 1");
const reads: ReadSettings = quick
  ? {
      rounds: readRounds,
      seconds: 2,
      warmupSeconds: 2,
      connections: 10,
      probes: 3,
      slices: { rounds: 3, seconds: 1 },
    }
  : {
      rounds: readRounds,
      seconds: 8,
      warmupSeconds: 3,
      connections: 10,
      probes: 5,
      slices: { rounds: 12, seconds: 2 },
    };
const bulk: SerialSettings = quick ? { rounds: 3, requests: 5 } : { rounds: 3, requests: 20 };
const fanOut: SerialSettings = quick ? { rounds: 3, requests: 5 } : { rounds: 3, requests: 20 };
const nested: SerialSettings = quick ? { rounds: 3, requests: 10 } : { rounds: 3, requests: 50 };
const fleetSizes = quick ? [10, 100] : [10, 100, 1000];
const coldStarts = quick ? 1 : 3;

const began = performance.now();
const log = (message: string) => {
  process.stderr.write(
    `[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}\n`,
  );
};

async function machine(): Promise<Machine> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
  await client.end();
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown CPU",
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    postgres: `PostgreSQL ${rows[0]?.server_version ?? "?"}`,
    host: hostname(),
  };
}

const serverEnv = {
  DATABASE_POOL_SIZE: String(poolSize),
  // The simulated devices report once and then stay quiet; they must not be swept offline mid-run.
  DEVICE_OFFLINE_TIMEOUT: "86400",
  LOG_LEVEL: "silent",
};

async function main(): Promise<void> {
  log(`${quick ? "quick" : "full"} run on ${databaseUrl.replace(/\/\/[^@]*@/, "//")}, pool ${poolSize}`);
  // Measure what `npm install` leaves: the compiled build, current with the sources (an edit since
  // the last build would otherwise make `fleetgate` run the sources through tsx).
  execFileSync(process.execPath, [fileURLToPath(new URL("../scripts/build.mjs", import.meta.url))], {
    stdio: "ignore",
  });
  const data = await prepareData(databaseUrl);
  log(
    data.generated
      ? `generated the data set in ${(data.generateMs / 1000).toFixed(1)} s`
      : "reusing the data set",
  );
  const adminKey = await createAdminKey(databaseUrl);
  const memberKey = await createMemberKey(databaseUrl);
  const reading = workloads.filter((w) => wanted(w.group, w.id));

  const children: Child[] = [];
  const peers: Peer[] = [];
  const peerProblems: string[] = [];
  let fleets: SimulatedFleet[] = [];
  const loads: LoadRow[] = [];
  const latencies: LatencyRow[] = [];
  let memory: Memory | undefined;
  let postgres: PostgresCpu | undefined;
  try {
    const server = await startFleetgate({ ...serverEnv, DATABASE_URL: databaseUrl });
    children.push(server);
    const raw = await startChild("baseline", ["--import", "tsx", "bench/baseline.ts"], {
      DATABASE_URL: databaseUrl,
      POOL_SIZE: String(poolSize),
    });
    children.push(raw);
    // PostgreSQL's CPU per request, for fleetgate, the baseline and PostGraphile (same database).
    postgres = await PostgresCpu.open(databaseUrl);
    if (withPeers && reading.some((w) => PEER_WORKLOADS.has(w.id))) {
      const starters: [string, () => Promise<Peer>][] = [
        ["PostGraphile", () => startPostgraphile(databaseUrl, poolSize, log, postgres)],
        ["pinejs", () => startPinejs(databaseUrl, poolSize, log)],
      ];
      for (const [label, start] of starters) {
        log(`starting ${label} (--peers)`);
        // A peer that cannot be installed or started costs its rows, not the whole run.
        try {
          peers.push(await start());
        } catch (error) {
          peerProblems.push(`${label}: ${(error as Error).message.slice(0, 500)}`);
          log(`${label} unavailable: ${(error as Error).message}`);
        }
      }
    }
    const fleetgate: Target = {
      name: "fleetgate",
      url: server.url,
      pid: server.pid,
      headers: { authorization: `Bearer ${adminKey}` },
      postgres,
    };
    const callers = {
      admin: fleetgate,
      user: { ...fleetgate, name: "fleetgate-user", headers: { authorization: `Bearer ${memberKey}` } },
    };
    const baseline: Target = { name: "baseline", url: raw.url, pid: raw.pid, headers: {}, postgres };

    // W4d's keys: ALIASES uuids each, every group starting where the last one ended.
    const uuids = Array.from({ length: 64 }, (_, group) =>
      Array.from(
        { length: ALIASES },
        (_, i) => data.deviceUuids[(group * ALIASES + i) % data.deviceUuids.length],
      ).join(","),
    );
    const keys = { uuid: data.deviceUuids, fleet: data.fleetIds.map(String), uuids };
    // A variant (W1u) is measured in the rounds of the workload it varies (W1), against one baseline.
    const rounds = new Map<string, Workload[]>();
    for (const workload of reading) {
      const lead = workload.variantOf ?? workload.id;
      rounds.set(lead, [...(rounds.get(lead) ?? []), workload]);
    }
    for (const variants of rounds.values()) {
      const kind = (variants[0] as Workload).keys;
      const targets = { fleetgate: callers, baseline, peers };
      loads.push(...(await measureReads(variants, keys[kind], targets, reads, log)));
    }
    const afterReadsMiB = rssBytes(server.pid) / MiB;
    const peersMiB = Object.fromEntries(peers.map((peer) => [peer.name, rssBytes(peer.target.pid) / MiB]));
    if (wanted("W3"))
      latencies.push(
        await measureBulkPatch(data.fleetIds, DEVICES_PER_FLEET, fleetgate, baseline, bulk, log),
      );
    if (wanted("W8")) latencies.push(...(await measureNestedFilters(data.fleetIds, callers, nested, log)));
    if (wanted("W5")) {
      log(`starting simulated fleets of ${fleetSizes.join(", ")} devices`);
      fleets = await startProxyFleets(fleetgate, databaseUrl, fleetSizes);
      log("every device reported");
      for (const fleet of fleets)
        latencies.push(await measureFanOut(fleet, fleetgate, baseline, fanOut, log));
    }
    memory = {
      afterReadsMiB,
      afterAllMiB: rssBytes(server.pid) / MiB,
      baselineMiB: rssBytes(raw.pid) / MiB,
      ...(peers.length ? { peersMiB } : {}),
    };
  } catch (error) {
    // A server that died mid-run is the likeliest cause: say so, with what it last wrote.
    for (const child of children) {
      const { exitCode, signalCode } = child.process;
      if (exitCode !== null || signalCode !== null)
        log(`${child.name} exited (${exitCode ?? signalCode}) during the run:\n${child.stderr()}`);
    }
    throw error;
  } finally {
    await stopProxyFleets(fleets);
    for (const peer of peers) await peer.stop();
    for (const child of children) await child.stop();
    await postgres?.close();
  }

  let coldStart: ColdStart | undefined;
  if (wanted("W6")) {
    log("cold starts");
    coldStart = await measureColdStart(databaseUrl, serverEnv, coldStarts);
  }
  let embeddedMemory: EmbeddedMemory | undefined;
  if (wanted("W9")) {
    log("the embedded database's memory");
    embeddedMemory = await measureEmbeddedMemory(serverEnv, quick ? 20 : 60);
  }

  const partial: Omit<RunResult, "targets"> = {
    date: new Date().toISOString(),
    // A run of some workloads is named for it: only a full run of all of them is "full".
    mode: quick ? "quick" : only ? "only" : "full",
    machine: await machine(),
    settings: {
      reads,
      bulk,
      fanOut,
      nested,
      fleetSizes,
      coldStarts,
      poolSize,
      only: only ? [...only] : "all",
      peers: [...peers.map((peer) => peer.label), ...peerProblems],
    },
    data: {
      fleets: FLEETS,
      devicesPerFleet: DEVICES_PER_FLEET,
      generated: data.generated,
      generateSeconds: data.generateMs / 1000,
    },
    loads,
    latencies,
    ...(coldStart ? { coldStart } : {}),
    ...(memory && wanted("W7") ? { memory } : {}),
    ...(embeddedMemory ? { embeddedMemory } : {}),
    seconds: (performance.now() - began) / 1000,
  };
  const result: RunResult = { ...partial, targets: evaluate(partial) };
  const table = markdown(result);
  mkdirSync(resultsDir, { recursive: true });
  const stamp = `${result.date.replaceAll(":", "-").slice(0, 19)}-${result.mode}`;
  writeFileSync(join(resultsDir, `${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${stamp}.md`), table);
  writeFileSync(join(resultsDir, `${stamp}.svg`), chart(result));
  // Only a full run of every workload becomes "latest", the numbers the README shows.
  if (!quick && !only) {
    writeFileSync(join(resultsDir, "latest.json"), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(resultsDir, "latest.md"), table);
    writeFileSync(join(resultsDir, "latest.svg"), chart(result));
  }
  process.stdout.write(`${table}\n`);
  log(`done; results in bench/results/${stamp}.{json,md,svg}${!quick && !only ? " and latest.*" : ""}`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
