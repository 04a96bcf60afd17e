import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./load.ts";
import { startFleetgate } from "./processes.ts";
import type { ColdStart } from "./report.ts";

async function timedStart(env: Record<string, string>): Promise<number> {
  const server = await startFleetgate(env);
  await server.stop();
  return server.startMs;
}

/**
 * W6: spawn of `fleetgate serve` to its first 200 on /ping, `runs` times on PostgreSQL (already
 * migrated, as a restart in production finds it) and on the embedded database in a new directory,
 * whose first start also makes its data directory (a copy of the template, or initdb) and runs
 * every migration, and is reported apart.
 */
export async function measureColdStart(
  databaseUrl: string,
  env: Record<string, string>,
  runs: number,
): Promise<ColdStart> {
  const postgresRuns: number[] = [];
  for (let i = 0; i < runs; i++) postgresRuns.push(await timedStart({ ...env, DATABASE_URL: databaseUrl }));
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-bench-embedded-"));
  try {
    const embedded = { ...env, DATABASE_URL: "", DATA_DIR: dataDir };
    const embeddedFirstMs = await timedStart(embedded);
    const embeddedWarmRuns: number[] = [];
    for (let i = 0; i < runs; i++) embeddedWarmRuns.push(await timedStart(embedded));
    return {
      postgresMs: median(postgresRuns),
      postgresRuns,
      embeddedFirstMs,
      embeddedWarmMs: median(embeddedWarmRuns),
      embeddedWarmRuns,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
