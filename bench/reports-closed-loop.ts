// `npx tsx bench/reports-closed-loop.ts [label]`: v2 state reports alone, closed loop (issue 46,
// item 2). Seeds 4,000 devices on a scratch database of BENCH_DATABASE_URL's server, starts one
// `fleetgate serve`, reports once from every device (their keys then in the credential cache), then
// CONCURRENCY (64, env CONCURRENCY) clients report for SECONDS, each a device at a time in turn.
// Measures reports/s, p50/p99, the server's CPU per report, and from PostgreSQL's own statistics
// the commits (every statement of its own is one) and WAL syncs per report. Writes
// bench/results/reports-closed-loop-<date>[-label].json.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { migrateDatabase } from "./data.ts";
import { deviceKey, deviceUuid, seedDevices } from "./devices-seed.ts";
import { resultsDir } from "./paths.ts";
import { cpuMicros, startFleetgate } from "./processes.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const DEVICES = 4_000;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
const SECONDS = 15;
const label = process.argv[2];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const scratch = await createScratchDatabase("fg_bench_reports");
try {
  await migrateDatabase(scratch.url);
  const seeded = await seedDevices(scratch.url, { devices: DEVICES, fleets: 2, salt: "reports" });
  const server = await startFleetgate({ DATABASE_URL: scratch.url, DEVICE_OFFLINE_TIMEOUT: "86400" });
  const stats = new pg.Client({ connectionString: scratch.url });
  await stats.connect();
  // Both counters are PostgreSQL's cumulative statistics, flushed within a second: read after a pause.
  const counters = async () => {
    await stats.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await stats.query<{ commits: string; syncs: string }>(
      `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits,
              (SELECT wal_sync FROM pg_stat_wal) AS syncs`,
    );
    return { commits: Number(rows[0]?.commits), syncs: Number(rows[0]?.syncs) };
  };
  try {
    const report = async (n: number, value: number) => {
      const response = await fetch(`${server.url}/device/v2/${deviceUuid(n)}/state`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${deviceKey(seeded.salt, n)}`, "content-type": "application/json" },
        body: JSON.stringify({ status: `report ${value}`, memory_usage: value, cpu_temp: value % 90 }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`a report was answered ${response.status}`);
    };
    let warm = 1;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (warm <= DEVICES) await report(warm++, 0);
      }),
    );
    await sleep(1_500);
    const before = await counters();
    const cpuBefore = cpuMicros(server.pid);
    const started = performance.now();
    const latencies: number[] = [];
    let sent = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < started + SECONDS * 1000) {
          const n = (sent++ % DEVICES) + 1;
          const at = performance.now();
          await report(n, sent);
          latencies.push(performance.now() - at);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuMicros(server.pid) - cpuBefore;
    await sleep(1_500);
    const after = await counters();
    latencies.sort((a, b) => a - b);
    const at = (q: number) => Math.round((latencies[Math.floor(q * (latencies.length - 1))] ?? 0) * 10) / 10;
    const reports = latencies.length;
    const result = {
      date: new Date().toISOString(),
      devices: DEVICES,
      concurrency: CONCURRENCY,
      seconds: Math.round(seconds * 10) / 10,
      reports,
      reportsPerSecond: Math.round(reports / seconds),
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      serverCpuUsPerReport: Math.round(cpu / reports),
      // Every commit in the database meanwhile: the reports' and the credential lookups' (a cached
      // key lives 5 s) and the server's own background statements.
      commitsPerReport: Math.round(((after.commits - before.commits) / reports) * 1000) / 1000,
      walSyncsPerReport: Math.round(((after.syncs - before.syncs) / reports) * 1000) / 1000,
    };
    const name = `reports-closed-loop-${result.date.slice(0, 19).replaceAll(":", "-")}${label ? `-${label}` : ""}.json`;
    writeFileSync(join(resultsDir, name), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\nwritten to bench/results/${name}\n`);
  } finally {
    await stats.end();
    await server.stop();
  }
} finally {
  await scratch.drop();
}
