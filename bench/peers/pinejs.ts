import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PostgresCpu } from "../postgres-cpu.ts";
import { type Child, startChild } from "../processes.ts";
import { createScratchDatabase, type ScratchDatabase } from "../scratch-database.ts";
import { type BenchRequest, workloads } from "../workloads.ts";
import { installPeer } from "./install.ts";
import { baselineRows, type Peer } from "./peer.ts";

// pinejs 23 (bench/peers/pinejs/: fleet.sbvr at apiRoot v6, read as its guest; see its server.mjs).
// Its OData is the wire format fleetgate's /v6 copies, so it gets the bench's own requests, and its
// answers are read as the baseline's are. It has tables of its own, named
// from the model ("device"."device name", "belongs to-application"…), in a scratch database on
// the bench's server, filled from the bench's fleets before the first round.

/** The workloads pinejs answers: the OData reads (GraphQL is not pinejs's). */
const ODATA = new Set(["W1", "W2a", "W2b"]);

/**
 * pinejs's request equivalent to workload `id`: the bench's own OData request, with `$`, `=`, `;`
 * and `,` unencoded, as pinejs-client sends them. pinejs's parser does not decode them, so it
 * refuses `$expand=owns__device(%24select%3D…)` as a malformed URL; fleetgate reads both forms.
 */
export function pinejsRequest(id: string, key: string): BenchRequest | undefined {
  if (!ODATA.has(id)) return undefined;
  const request = workloads.find((workload) => workload.id === id)?.build(key);
  return request && { ...request, path: request.path.replace(/%24|%3D|%3B|%2C/g, decodeURIComponent) };
}

/** pinejs's answer to W1, W2a or W2b as the rows `baselineRows` makes of the baseline's. */
export function pinejsRows(id: string, body: unknown): unknown {
  if (!ODATA.has(id)) throw new Error(`pinejs has no request for ${id}`);
  if (!Array.isArray((body as { d?: unknown } | null)?.d))
    throw new Error(`pinejs answered ${JSON.stringify(body).slice(0, 300)}`);
  return baselineRows(id, body);
}

const BATCH = 20_000;

/**
 * The bench's fleets and their devices, with their ids, from fleetgate's tables into pinejs's; then
 * the index open-balena-api's migrations put on a device's fleet, and fresh statistics.
 */
export async function copyBenchRows(sourceUrl: string, targetUrl: string): Promise<{ devices: number }> {
  const source = new pg.Client({ connectionString: sourceUrl });
  const target = new pg.Client({ connectionString: targetUrl });
  await source.connect();
  try {
    await target.connect();
    const fleets = await source.query<{ id: number; app_name: string }>(
      `SELECT id, app_name FROM application WHERE slug LIKE 'bench/fleet-%' ORDER BY id`,
    );
    await target.query(
      `INSERT INTO "application" ("id", "app name") SELECT * FROM unnest($1::int[], $2::text[])`,
      [fleets.rows.map((row) => row.id), fleets.rows.map((row) => row.app_name)],
    );
    let devices = 0;
    for (let after = 0; ; ) {
      const { rows } = await source.query<{
        id: number;
        uuid: string;
        device_name: string | null;
        is_online: boolean;
        belongs_to__application: number;
      }>(
        `SELECT d.id, d.uuid, d.device_name, d.is_online, d.belongs_to__application
         FROM device d JOIN application a ON a.id = d.belongs_to__application
         WHERE a.slug LIKE 'bench/fleet-%' AND d.id > $1 ORDER BY d.id LIMIT ${BATCH}`,
        [after],
      );
      if (!rows.length) break;
      await target.query(
        `INSERT INTO "device" ("id", "uuid", "device name", "is online", "belongs to-application")
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::bool[], $5::int[])`,
        [
          rows.map((row) => row.id),
          rows.map((row) => row.uuid),
          rows.map((row) => row.device_name),
          rows.map((row) => row.is_online),
          rows.map((row) => row.belongs_to__application),
        ],
      );
      devices += rows.length;
      after = (rows.at(-1) as { id: number }).id;
    }
    await target.query(
      `CREATE INDEX IF NOT EXISTS "device_application_idx" ON "device" ("belongs to-application")`,
    );
    await target.query("ANALYZE");
    return { devices };
  } finally {
    await Promise.allSettled([source.end(), target.end()]);
  }
}

/**
 * Installs the peer folder if needed, makes pinejs a scratch database on `databaseUrl`'s server,
 * starts it there on its own Node 22 (it creates its tables), and copies the bench's rows in.
 */
export async function startPinejs(
  databaseUrl: string,
  poolSize: number,
  log: (message: string) => void,
): Promise<Peer> {
  const installed = await installPeer("pinejs");
  const { version } = JSON.parse(
    readFileSync(join(installed.dir, "node_modules", "@balena", "pinejs", "package.json"), "utf8"),
  ) as { version: string };
  log(`pinejs ${version} ${installed.installed ? "installed" : "already installed"} in ${installed.dir}`);
  const scratch: ScratchDatabase = await createScratchDatabase(
    "fleetgate_bench_pinejs",
    new URL(databaseUrl),
  );
  let child: Child | undefined;
  let postgres: PostgresCpu | undefined;
  const stop = async () => {
    await child?.stop();
    await postgres?.close();
    await scratch.drop();
  };
  try {
    child = await startChild(
      "pinejs",
      [join(installed.dir, "server.mjs")],
      { DATABASE_URL: scratch.url, POOL_SIZE: String(poolSize), NODE_ENV: "production" },
      { command: installed.node, cwd: installed.dir },
    );
    const started = performance.now();
    const { devices } = await copyBenchRows(databaseUrl, scratch.url);
    log(`pinejs: ${devices} devices copied in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    postgres = await PostgresCpu.open(scratch.url);
    return {
      name: "pinejs",
      label: `pinejs ${version}`,
      target: { name: "pinejs", url: child.url, pid: child.pid, headers: {}, postgres },
      request: pinejsRequest,
      rows: pinejsRows,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
