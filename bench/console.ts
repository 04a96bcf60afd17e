// `npm run bench:console [-- --devices 10000] [-- --runs 5]`: issue 48's target, "a 10,000-device
// fleet's device page becomes usable within 1.5 s", measured in the browser. A `fleetgate serve` on
// PostgreSQL (a scratch database on BENCH_DATABASE_URL's server, dropped at the end) with the demo
// data and one more fleet of N devices; Debian's headless Chromium (CHROMIUM_PATH) opens the
// console at that fleet's page, signed in, and the page is usable once its table shows the first
// page of devices (and their count): the time from navigation start, by the page's own clock
// (performance.now()), after one unmeasured load that warms the server. Each cold run is a fresh browser context (nothing cached: the page, its
// script and stylesheet are fetched again); each warm run reloads the same tab (assets cached).
// Writes bench/results/console-latest.json.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { chromium } from "playwright-core";
import { migrateDatabase } from "./data.ts";
import { bin, repoRoot, resultsDir } from "./paths.ts";
import { startFleetgate } from "./processes.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: { devices: { type: "string", default: "10000" }, runs: { type: "string", default: "5" } },
});
const devices = Number(flags.devices);
const runs = Number(flags.runs);
if (!Number.isInteger(devices) || devices < 1 || !Number.isInteger(runs) || runs < 1)
  throw new Error("--devices and --runs: positive integers");

function seedDemo(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "seed", "--demo"], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "silent" },
      stdio: "ignore",
    });
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`seed exited with ${code}`))));
  });
}

/** N devices in a new fleet of the demo organization, in two statements (actors, then devices). */
async function largeFleet(url: string, count: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: number; is_for__device_type: number }>(
      `WITH a AS (INSERT INTO "actor" DEFAULT VALUES RETURNING "id")
       INSERT INTO "application" ("actor", "app_name", "slug", "organization", "is_for__device_type", "uuid")
       SELECT a."id", 'large-fleet', 'demo/large-fleet', o."id", dt."id", md5('large-fleet')
       FROM a, "organization" o, "device_type" dt
       WHERE o."handle" = 'demo' AND dt."slug" = 'raspberrypi4-64'
       RETURNING "id", "is_for__device_type"`,
    );
    const fleet = rows[0];
    if (!fleet) throw new Error("no demo organization or device type to make the large fleet in");
    await client.query(
      `WITH actors AS (
         INSERT INTO "actor" ("id") SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int) RETURNING "id"
       ), numbered AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM actors)
       INSERT INTO "device" ("actor", "uuid", "device_name", "belongs_to__application", "is_of__device_type",
                             "is_online", "api_heartbeat_state", "status", "last_connectivity_event")
       SELECT "id", md5('large-' || n), 'large-' || lpad(n::text, 5, '0'), $2::int, $3::int,
              n % 4 <> 0, CASE WHEN n % 4 <> 0 THEN 'online' ELSE 'offline' END, 'Idle', now() - n * interval '1 minute'
       FROM numbered`,
      [count, fleet.id, fleet.is_for__device_type],
    );
    return fleet.id;
  } finally {
    await client.end();
  }
}

async function session(url: string): Promise<string> {
  const login = await fetch(`${url}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "demo", password: "demo-password" }),
  });
  const token = await login.text();
  const who = (await (
    await fetch(`${url}/actor/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as {
    id: number;
    actorTypeId: number;
    username: string;
    email: string;
  };
  const stored = {
    credential: token,
    kind: "session token",
    who: { actor: who.id, userId: who.actorTypeId, username: who.username, email: who.email },
  };
  return JSON.stringify(stored);
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const scratch = await createScratchDatabase("console_bench");
let server: Awaited<ReturnType<typeof startFleetgate>> | undefined;
try {
  await migrateDatabase(scratch.url);
  await seedDemo(scratch.url);
  const fleet = await largeFleet(scratch.url, devices);
  server = await startFleetgate({ DATABASE_URL: scratch.url });
  const stored = await session(server.url);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const target = `${server.url}/console/#/fleets/${fleet}`;
  const usable = async (page: import("playwright-core").Page) => {
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="devices"] tbody tr').length === n,
      Math.min(50, devices),
      { polling: "raf", timeout: 30_000 },
    );
    return page.evaluate(() => performance.now());
  };
  // Where a cold load's time goes: each request's start and end, by the page's clock.
  const timeline = (page: import("playwright-core").Page) =>
    page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map(
          (entry) =>
            `${entry.name.replace(location.origin, "")} ${Math.round(entry.startTime)}-${Math.round(entry.startTime + entry.duration)}`,
        ),
    );
  let coldTimeline: string[] = [];
  // One load first, not measured: the server's first GraphQL request loads GraphQL and plans the
  // statements (README "How start-up works"), a cost of the server's start, not of the page.
  {
    const context = await browser.newContext();
    await context.addInitScript(
      (value) => sessionStorage.setItem("fleetgate.console.session", value),
      stored,
    );
    const page = await context.newPage();
    await page.goto(target);
    await usable(page);
    await context.close();
  }
  const cold: number[] = [];
  const warm: number[] = [];
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext();
    await context.addInitScript(
      (value) => sessionStorage.setItem("fleetgate.console.session", value),
      stored,
    );
    const page = await context.newPage();
    await page.goto(target);
    cold.push(await usable(page));
    coldTimeline = await timeline(page);
    await page.reload();
    warm.push(await usable(page));
    await context.close();
  }
  await browser.close();
  const result = {
    date: new Date().toISOString(),
    devices,
    runs,
    coldMs: cold.map(Math.round),
    warmMs: warm.map(Math.round),
    coldMedianMs: Math.round(median(cold)),
    warmMedianMs: Math.round(median(warm)),
    coldMaxMs: Math.round(Math.max(...cold)),
    targetMs: 1500,
    lastColdTimeline: coldTimeline,
  };
  writeFileSync(`${resultsDir}console-latest.json`, `${JSON.stringify(result, null, 1)}\n`);
  process.stdout.write(
    `A ${devices}-device fleet's page usable in ${result.coldMedianMs} ms (cold, median of ${runs}; max ${result.coldMaxMs} ms), ` +
      `${result.warmMedianMs} ms warm (target 1500 ms)\n`,
  );
} finally {
  await server?.stop();
  await scratch.drop();
}
