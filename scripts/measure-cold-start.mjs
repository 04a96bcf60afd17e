#!/usr/bin/env node
// Cold start: the time from spawning `node bin/fleetgate.js serve` to its first 200 on GET /ping.
//
//   node scripts/measure-cold-start.mjs [--runs N] [--embedded] [--database-url URL] [--entry FILE]
//
// PostgreSQL (DATABASE_URL, or --database-url) unless --embedded, which uses a fresh PGlite data
// directory. One unmeasured warm-up start applies the migrations and creates the admin user, so the
// measured starts are the everyday case: nothing pending. Prints each time and the median (ms).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    embedded: { type: "boolean", default: false },
    "database-url": { type: "string" },
    entry: { type: "string", default: fileURLToPath(new URL("../bin/fleetgate.js", import.meta.url)) },
    timeout: { type: "string", default: "30000" },
  },
});
const runs = Number(options.runs);
const databaseUrl = options["database-url"] ?? process.env.DATABASE_URL;
if (!options.embedded && !databaseUrl) {
  process.stderr.write("Set DATABASE_URL (or --database-url), or pass --embedded.\n");
  process.exit(2);
}
const dataDir = options.embedded ? mkdtempSync(join(tmpdir(), "fleetgate-cold-start-")) : undefined;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/ping", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
    });
    req.on("error", () => resolve(false));
    req.end();
  });
}

async function startOnce() {
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "silent" };
  if (options.embedded) {
    env.DATABASE_URL = "";
    env.DATA_DIR = dataDir;
  } else env.DATABASE_URL = databaseUrl;
  // A fixed admin password keeps the warm-up start from printing a generated one.
  env.ADMIN_PASSWORD ??= "cold-start-password";
  const started = performance.now();
  const child = spawn(process.execPath, [options.entry, "serve"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  let exited = false;
  const exit = new Promise((resolve) => child.once("exit", resolve));
  child.once("exit", () => {
    exited = true;
  });
  const deadline = started + Number(options.timeout);
  try {
    while (!exited && performance.now() < deadline) {
      if (await ping(port)) return { wall: performance.now() - started, cpu: cpuTime(child.pid) };
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error(`no 200 on /ping (${exited ? "the server exited" : "timed out"}):\n${stderr}`);
  } finally {
    child.kill("SIGTERM");
    await exit;
  }
}

// The CPU time the server used to get there (user + system, Linux only): steadier than the wall
// time on a busy machine.
function cpuTime(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return Number.NaN;
  }
}
const clockTicks = 100; // USER_HZ: 100 on every Linux that Node supports

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

try {
  await startOnce(); // warm-up: migrations, admin user, file-system caches
  const results = [];
  for (let run = 0; run < runs; run++) results.push(await startOnce());
  const times = results.map((result) => result.wall);
  const cpu = results.map((result) => result.cpu);
  const database = options.embedded ? "embedded" : "postgres";
  process.stdout.write(`${database}: ${times.map((t) => t.toFixed(0)).join(" ")} ms\n`);
  const cpuNote = cpu.some(Number.isNaN) ? "" : ` (CPU ${median(cpu).toFixed(0)} ms)`;
  process.stdout.write(
    `median cold start (${database}, ${runs} runs): ${median(times).toFixed(0)} ms${cpuNote}\n`,
  );
} finally {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
