// `npm run bench:hostile [-- --rounds 10] [-- --only graphqlAliases2000,odataInList] [-- --database embedded]`: issue 45's
// hostile documents against a server at its default limits, anonymous and signed in, and how long
// each held the event loop: the longest block (monitorEventLoopDelay) and `/ping`'s p99 and longest
// latency while it ran. The server runs in this process, on a scratch database of
// BENCH_DATABASE_URL's PostgreSQL (or, with `--database embedded`, the embedded database in memory,
// whose statements run on a thread of its own), so its event loop is the one measured. The README's
// table under "Hostile documents" comes from here. Target: no block over 50 ms.

import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { createUser } from "../src/accounts.ts";
import { createApiKey } from "../src/auth/api-keys.ts";
import { loadConfig } from "../src/config.ts";
import type { Database } from "../src/db/database.ts";
import { openEmbedded } from "../src/db/embedded.ts";
import { migrate } from "../src/db/migrate.ts";
import { openPostgres } from "../src/db/postgres.ts";
import { createLogger } from "../src/logger.ts";
import { buildModel } from "../src/model/registry.ts";
import { buildServer } from "../src/server.ts";
import { type AttackName, attacks, measureAttack } from "./hostile-documents.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "10" },
    only: { type: "string" },
    database: { type: "string", default: "postgres" },
  },
});
const rounds = Number(flags.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a whole number, not ${flags.rounds}`);
const names = (
  flags.only ? flags.only.split(",").map((name) => name.trim()) : Object.keys(attacks)
) as AttackName[];
for (const name of names) if (!(name in attacks)) throw new Error(`--only: no attack ${name}`);

if (flags.database !== "postgres" && flags.database !== "embedded")
  throw new Error(`--database: postgres or embedded, not ${flags.database}`);

/** The server's database, empty: the embedded one in memory, or a scratch database of PostgreSQL. */
async function openBenchDatabase(): Promise<{ db: Database; url?: string; drop: () => Promise<void> }> {
  if (flags.database === "embedded") {
    const db = await openEmbedded(undefined);
    return { db, drop: () => db.close() };
  }
  const scratch = await createScratchDatabase("fg_bench_hostile");
  const db = openPostgres({ url: scratch.url, poolSize: 2 * availableParallelism() });
  return {
    db,
    url: scratch.url,
    drop: async () => {
      await db.close();
      await scratch.drop();
    },
  };
}

/** The server's database, migrated, with an admin's key; `drop` removes it. */
async function benchDatabase() {
  const opened = await openBenchDatabase();
  const { db } = opened;
  await migrate(db);
  const id = await createUser(db, buildModel(), {
    username: "bench-admin",
    email: "bench-admin@example.com",
    password: "bench-admin-password",
    isAdmin: true,
  });
  const [user] = await db.query<{ actor: number }>({
    text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
    values: [id],
  });
  if (!user) throw new Error("the bench's admin was not created");
  return { ...opened, admin: await createApiKey(db, { actor: user.actor, name: "bench-admin" }) };
}

const database = await benchDatabase();
try {
  const signedIn = `Bearer ${database.admin}`;
  const { db } = database;
  const app = await buildServer({
    db,
    model: buildModel(),
    config: loadConfig({ LOG_LEVEL: "silent", ...(database.url ? { DATABASE_URL: database.url } : {}) }),
    logger: createLogger("silent"),
  });
  try {
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    // GraphQL loads on its first request; each attack runs once before it is measured, so what is
    // measured is the request, not the first run of the code that answers it.
    await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"query":"{ devicesCount }"}',
    });
    const started = new Date().toISOString();
    process.stdout.write(
      `${started}, ${flags.database}, ${cpus()[0]?.model ?? "?"} × ${availableParallelism()}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}, ${rounds} rounds each\n\n`,
    );
    process.stdout.write(
      "| attack | caller | statuses | slowest answer ms | longest block ms | /ping p99 ms | /ping max ms |\n|---|---|---|---|---|---|---|\n",
    );
    for (const name of names) {
      for (const [caller, authorization] of [
        ["anonymous", undefined],
        ["signed in", signedIn],
      ] as const) {
        const options = authorization ? { rounds, authorization } : { rounds };
        await measureAttack(url, attacks[name], { ...options, rounds: 1 });
        const figures = await measureAttack(url, attacks[name], options);
        const statuses = [...new Set(figures.answers.map((answer) => answer.status))].join(", ");
        const slowest = Math.max(...figures.answers.map((answer) => answer.ms));
        process.stdout.write(
          `| ${name} | ${caller} | ${statuses} | ${slowest.toFixed(0)} | ${figures.maxBlockMs.toFixed(1)} | ${figures.pingP99Ms.toFixed(1)} | ${figures.pingMaxMs.toFixed(1)} |\n`,
        );
      }
    }
  } finally {
    await app.close();
  }
} finally {
  await database.drop();
}
