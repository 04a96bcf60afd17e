// `npx tsx bench/throttle.ts [-- --usernames 100000] [-- --max-keys 100000,1000] [-- --batch 50]
// [-- --databases postgres,embedded]`: issue 45's campaign. Distinct usernames, each failing once
// from an address of its own, through the login throttle the server runs (src/auth/shared-throttle.ts
// over the `login_throttle` table), in batches of parallel attempts: the most rows each kind held
// during the run (sampled after every 100 batches) against LOGIN_THROTTLE_MAX_KEYS, the rows and the
// table's size after a final sweep, the attempts per second, and the process's RSS and heap (after a
// full collection) before and after. PostgreSQL on BENCH_DATABASE_URL's server (a scratch database,
// dropped at the end), the embedded database (in this process: its RSS includes the database), and
// `memory`, the fallback each instance counts in while the database fails (memory-throttle.ts).
// test/auth/throttle-many-usernames.test.ts runs a smaller campaign in `npm test`.

import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { LoginThrottle } from "../src/auth/memory-throttle.ts";
import { SharedLoginThrottle } from "../src/auth/shared-throttle.ts";
import { defaultThrottleOptions } from "../src/auth/throttle.ts";
import { ThrottleKinds, ThrottleStore } from "../src/auth/throttle-store.ts";
import type { Database } from "../src/db/database.ts";
import { openEmbedded } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";
import { openPostgres } from "../src/db/postgres.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    usernames: { type: "string", default: "100000" },
    "max-keys": { type: "string", default: "100000,1000" },
    batch: { type: "string", default: "50" },
    databases: { type: "string", default: "postgres,embedded,memory" },
  },
});
const usernames = Number(flags.usernames);
const batch = Number(flags.batch);

const address = (i: number) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

// A full collection before each reading, so the heap is what is kept, not what awaits collection.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
function memory(): { rssMiB: number; heapMiB: number } {
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMiB: mib(rss), heapMiB: mib(heapUsed) };
}

async function campaign(db: Database, maxKeys: number): Promise<Record<string, unknown>> {
  const options = { ...defaultThrottleOptions, maxKeys };
  await db.query({ text: `DELETE FROM "login_throttle"`, values: [] });
  const store = new ThrottleStore(db, "bench", options);
  const throttle = new SharedLoginThrottle(store, options);
  const most = { address: 0, pair: 0, username: 0 };
  const before = memory();
  const started = performance.now();
  const now = Date.now();
  for (let first = 0; first < usernames; first += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, usernames - first) }, async (_, offset) => {
        const i = first + offset;
        await (await throttle.begin(`user-${i}`, address(i), now)).failed(now);
      }),
    );
    if ((first / batch) % 100 === 0) {
      const rows = await store.rows();
      for (const kind of ThrottleKinds) most[kind] = Math.max(most[kind], rows[kind]);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await throttle.sweep(now);
  const after = await store.rows();
  const [table] = await db.query<{ bytes: string }>({
    text: `SELECT pg_total_relation_size('"login_throttle"')::text AS "bytes"`,
    values: [],
  });
  throttle.close();
  return {
    maxKeys,
    usernames,
    attemptsPerSecond: Math.round(usernames / seconds),
    mostRows: most,
    rowsAfterSweep: after,
    tableMiB: mib(Number(table?.bytes ?? Number.NaN)),
    localKeys: throttle.localSize,
    memory: { before, after: memory() },
  };
}

/** The same campaign through the in-memory throttle alone: what an instance holds while the database fails. */
async function memoryCampaign(maxKeys: number): Promise<Record<string, unknown>> {
  const options = { ...defaultThrottleOptions, maxKeys };
  const before = memory();
  const started = performance.now();
  const now = Date.now();
  let throttle: LoginThrottle | undefined = new LoginThrottle(options);
  let most = 0;
  for (let i = 0; i < usernames; i++) {
    await (await throttle.begin(`user-${i}`, address(i), now)).failed(now);
    if (i % 5_000 === 0) most = Math.max(most, throttle.size);
  }
  const seconds = (performance.now() - started) / 1000;
  const held = memory();
  const keys = throttle.size;
  throttle = undefined;
  return {
    database: "memory",
    maxKeys,
    usernames,
    attemptsPerSecond: Math.round(usernames / seconds),
    mostKeys: Math.max(most, keys),
    keysAfter: keys,
    memory: { before, after: held, released: memory() },
  };
}

async function onDatabase(kind: string, work: (db: Database) => Promise<void>): Promise<void> {
  if (kind === "embedded") {
    const db = await openEmbedded(undefined);
    await migrate(db);
    await work(db).finally(() => db.close());
    return;
  }
  const scratch = await createScratchDatabase("fg_bench_throttle");
  const db = openPostgres({ url: scratch.url, poolSize: 4 });
  try {
    await migrate(db);
    await work(db);
  } finally {
    await db.close();
    await scratch.drop();
  }
}

const capacities = flags["max-keys"].split(",").map(Number);
process.stdout.write(
  `${new Date().toISOString()}, ${cpus()[0]?.model ?? "?"} × ${availableParallelism()}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}\n`,
);
for (const kind of flags.databases.split(",")) {
  if (kind === "memory") {
    for (const maxKeys of capacities) console.log(JSON.stringify(await memoryCampaign(maxKeys)));
    continue;
  }
  await onDatabase(kind, async (db) => {
    for (const maxKeys of capacities)
      console.log(JSON.stringify({ database: kind, ...(await campaign(db, maxKeys)) }));
  });
}
