// `npx tsx bench/target-reads.ts [-- --api v3] [-- --devices 20000] [-- --fleets 10]
// [-- --fleet-variables 10] [-- --seconds 20] [-- --connections 64]`: the target-state poll that
// reads (issue 46, item 3). `npm run bench:devices` polls with the ETag each device last got, so
// its steady phase is all 304s the cache answers without a statement; this drives the other path,
// a poll whose ETag is not current (after a release, a variable or a restart), at full speed:
// closed-loop, `--connections` at once, each poll a device in turn with `If-None-Match: "stale"`,
// after one pass that puts every device's key in the server's credential cache.
// Prints polls/s, p50/p99 and SQL statements per poll (/metrics) with the machine's load average.
// Needs PostgreSQL (BENCH_DATABASE_URL's server); uses a database of its own, dropped at the end.

import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { migrateDatabase } from "./data.ts";
import { deviceKey, deviceUuid, seedDevices } from "./devices-seed.ts";
import { cpuMicros, startFleetgate } from "./processes.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    api: { type: "string", default: "v3" },
    devices: { type: "string", default: "20000" },
    fleets: { type: "string", default: "10" },
    "fleet-variables": { type: "string", default: "10" },
    seconds: { type: "string", default: "20" },
    connections: { type: "string", default: "64" },
  },
});
const api = flags.api === "v2" ? "v2" : "v3";
const devices = Number(flags.devices);
const seconds = Number(flags.seconds);
const connections = Number(flags.connections);
const METRICS_TOKEN = "bench-target-reads-metrics-0123456789";

function get(agent: Agent, base: URL, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const outgoing = request({ agent, host: base.hostname, port: base.port, path, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

const scratch = await createScratchDatabase("fg_bench_target_reads");
try {
  await migrateDatabase(scratch.url);
  const salt = randomBytes(8).toString("hex");
  const seeded = await seedDevices(scratch.url, { devices, fleets: Number(flags.fleets), salt });
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  // More fleet variables beside the seeded ones (devices-seed.ts: three a fleet, one a device).
  await client.query(
    `INSERT INTO application_environment_variable (application, name, value)
       SELECT a.id, 'VAR_' || n, md5(a.id::text || n) FROM application a, generate_series(1, $1::int4) n`,
    [Number(flags["fleet-variables"])],
  );
  await client.end();
  const server = await startFleetgate({
    DATABASE_URL: scratch.url,
    SUPERVISOR_KEY_SECRET: "bench-target-reads-supervisor-key-secret-0123456789",
    ADMIN_PASSWORD: "bench-target-reads-admin",
    DEVICE_OFFLINE_TIMEOUT: "86400",
    METRICS_TOKEN,
  });
  try {
    const base = new URL(server.url);
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    const poll = (n: number) =>
      get(agent, base, `/device/${api}/${deviceUuid(n)}/state`, {
        authorization: `Bearer ${deviceKey(salt, n)}`,
        "if-none-match": '"stale"',
      });
    const statements = async () => {
      const { body } = await get(agent, base, "/metrics", { authorization: `Bearer ${METRICS_TOKEN}` });
      const total = (/^fleetgate_db_statements_total\{target="primary"\} (\d+)/m.exec(body) ?? [])[1];
      return Number(total);
    };
    // One pass: every key resolved and cached, as a running fleet's are.
    let next = 1;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next <= devices) {
          const { status } = await poll(next++);
          if (status !== 200) throw new Error(`priming: ${status}`);
        }
      }),
    );
    const load = loadavg().map((n) => n.toFixed(2));
    const before = await statements();
    const cpuBefore = cpuMicros(server.pid);
    const latencies: number[] = [];
    let errors = 0;
    const end = performance.now() + seconds * 1000;
    let device = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < end) {
          const started = performance.now();
          const { status } = await poll((device++ % devices) + 1);
          if (status === 200) latencies.push(performance.now() - started);
          else errors++;
        }
      }),
    );
    const cpu = (cpuMicros(server.pid) - cpuBefore) / 1e6 / seconds;
    const sent = (await statements()) - before;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => (latencies[Math.floor(q * (latencies.length - 1))] ?? 0).toFixed(1);
    process.stdout.write(
      `${api} polls that read (stale ETag), ${devices} devices in ${seeded.fleets.length} fleets, ` +
        `${flags["fleet-variables"]} fleet variables, ${connections} connections, ${seconds} s: ` +
        `${(latencies.length / seconds).toFixed(0)} polls/s, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, ` +
        `errors ${errors}, ${(sent / latencies.length).toFixed(3)} statements a poll, server CPU ` +
        `${(cpu * 100).toFixed(0)}%, load average before ${load.join(" ")}\n`,
    );
    agent.destroy();
  } finally {
    await server.stop();
  }
} finally {
  await scratch.drop();
}
