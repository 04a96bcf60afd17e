// `npm run bench:hostile [-- --rounds 10] [-- --only graphqlAliases2000,odataInList]`: issue 45's
// hostile documents against a server at its default limits, anonymous and signed in, and how long
// each held the event loop: the longest block (monitorEventLoopDelay) and `/ping`'s p99 and longest
// latency while it ran. The server runs in this process, on a scratch database of
// BENCH_DATABASE_URL's PostgreSQL, so its event loop is the one measured. The README's table under
// "Hostile documents" comes from here. Target: no block over 50 ms.

import { availableParallelism, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { openPostgres } from "../src/db/postgres.ts";
import { createLogger } from "../src/logger.ts";
import { buildModel } from "../src/model/registry.ts";
import { buildServer } from "../src/server.ts";
import { createAdminKey, migrateDatabase } from "./data.ts";
import { type AttackName, attacks, measureAttack } from "./hostile-documents.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: { rounds: { type: "string", default: "10" }, only: { type: "string" } },
});
const rounds = Number(flags.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a whole number, not ${flags.rounds}`);
const names = (
  flags.only ? flags.only.split(",").map((name) => name.trim()) : Object.keys(attacks)
) as AttackName[];
for (const name of names) if (!(name in attacks)) throw new Error(`--only: no attack ${name}`);

const scratch = await createScratchDatabase("fg_bench_hostile");
try {
  await migrateDatabase(scratch.url);
  const signedIn = `Bearer ${await createAdminKey(scratch.url)}`;
  const db = openPostgres({ url: scratch.url, poolSize: 2 * availableParallelism() });
  const app = await buildServer({
    db,
    model: buildModel(),
    config: loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: "silent" }),
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
      `${started}, ${cpus()[0]?.model ?? "?"} × ${availableParallelism()}, load average ${loadavg()
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
    await db.close();
  }
} finally {
  await scratch.drop();
}
