// `npx tsx bench/throttle.ts [-- --usernames 100000] [-- --max-keys 100000,1000] [-- --batch 50]
// [-- --databases postgres,embedded]`: issue 45's campaign. Distinct usernames, each failing once
// from an address of its own, through the login throttle the server runs (src/auth/shared-throttle.ts
// over the `login_throttle` table), in batches of parallel attempts: the most rows each kind held
// during the run (sampled after every 100 batches) against LOGIN_THROTTLE_MAX_KEYS, the rows after a
// final sweep, the attempts per second, and the heap before and after. PostgreSQL on
// BENCH_DATABASE_URL's server (a scratch database, dropped at the end), and the embedded database.
// test/auth/throttle-many-usernames.test.ts runs a smaller campaign in `npm test`.

import { parseArgs } from "node:util";
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
    databases: { type: "string", default: "postgres,embedded" },
  },
});
const usernames = Number(flags.usernames);
const batch = Number(flags.batch);

const address = (i: number) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

async function campaign(db: Database, maxKeys: number): Promise<Record<string, unknown>> {
  const options = { ...defaultThrottleOptions, maxKeys };
  await db.query({ text: `DELETE FROM "login_throttle"`, values: [] });
  const store = new ThrottleStore(db, "bench", options);
  const throttle = new SharedLoginThrottle(store, options);
  const most = { address: 0, pair: 0, username: 0 };
  const heapBefore = process.memoryUsage().heapUsed;
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
  throttle.close();
  return {
    maxKeys,
    usernames,
    attemptsPerSecond: Math.round(usernames / seconds),
    mostRows: most,
    rowsAfterSweep: after,
    localKeys: throttle.localSize,
    heapMiB: { before: mib(heapBefore), after: mib(process.memoryUsage().heapUsed) },
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

for (const kind of flags.databases.split(",")) {
  await onDatabase(kind, async (db) => {
    for (const maxKeys of flags["max-keys"].split(",").map(Number))
      console.log(JSON.stringify({ database: kind, ...(await campaign(db, maxKeys)) }));
  });
}
