import type { FastifyInstance } from "fastify";
import pg from "pg";
import { createApiKey } from "../../../src/auth/api-keys.ts";
import { loadDefaultCatalogue } from "../../../src/catalogue/defaults.ts";
import { loadConfig } from "../../../src/config.ts";
import type { Database } from "../../../src/db/database.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { openDatabase } from "../../../src/db/open.ts";
import { openPostgres } from "../../../src/db/postgres.ts";
import { createLogger } from "../../../src/logger.ts";
import { buildModel } from "../../../src/model/registry.ts";
import { buildServer } from "../../../src/server.ts";
import { testAdminPasswordHash } from "../server.ts";
import type { ReplicaCluster } from "./replica-cluster.ts";

// The world of test/db/replicas.test.ts: one database on the cluster's primary (streamed to its
// replica), its catalogue and an admin, and fleetgate servers on it with DATABASE_REPLICA_URLS.

export const DATABASE = "fleetgate";
const ADMIN_ID = 1_000_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Plain SQL on one server of the cluster, outside fleetgate. */
export async function sql<Row = Record<string, unknown>>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** Creates and migrates the database on the primary, with the catalogue and an admin; answers the admin's key. */
export async function prepareDatabase(cluster: ReplicaCluster): Promise<string> {
  await sql(cluster.primaryUrl("postgres"), `CREATE DATABASE "${DATABASE}"`);
  const db = openPostgres({ url: cluster.primaryUrl(DATABASE), poolSize: 2 });
  try {
    await migrate(db);
    await loadDefaultCatalogue(db);
    await db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ADMIN_ID] });
    await db.query({
      text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
             VALUES ($1::int4, $1::int4, 'test-admin', 'test-admin@localhost', $2::text, 'test', true)`,
      values: [ADMIN_ID, await testAdminPasswordHash()],
    });
    return await createApiKey(db, { actor: ADMIN_ID, name: "tests" });
  } finally {
    await db.close();
  }
}

export interface ReplicaServer {
  readonly app: FastifyInstance;
  readonly db: Database;
  close(): Promise<void>;
}

/** fleetgate on the cluster, configured as an operator would: DATABASE_URL and DATABASE_REPLICA_URLS. */
export async function startReplicaServer(
  cluster: ReplicaCluster,
  env: Record<string, string>,
): Promise<ReplicaServer> {
  const config = loadConfig({
    LOG_LEVEL: "silent",
    COMMAND_JOBS: "false",
    DATABASE_URL: cluster.primaryUrl(DATABASE),
    DATABASE_REPLICA_URLS: cluster.replicaUrl(DATABASE),
    DATABASE_POOL_SIZE: "4",
    ...env,
  });
  const db = await openDatabase(config);
  const app = await buildServer({ db, model: buildModel(), config, logger: createLogger("silent") });
  return {
    app,
    db,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/** Until the replica has replayed everything the primary has written now. */
export async function caughtUp(cluster: ReplicaCluster): Promise<void> {
  const [{ position }] = (await sql<{ position: string }>(
    cluster.primaryUrl(DATABASE),
    "SELECT pg_current_wal_lsn()::text AS position",
  )) as [{ position: string }];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    const [row] = await sql<{ done: boolean }>(
      cluster.replicaUrl(DATABASE),
      "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done",
      [position],
    ).catch(() => [{ done: false }]);
    if (row?.done) return;
  }
  throw new Error("the replica did not catch up within 30 s");
}

/** Until `db` has checked its replica `rounds` more times (each round checks it once). */
export async function rounds(db: Database, rounds = 2): Promise<void> {
  const replicaStatements = () => db.statementsByTarget?.().replica ?? 0;
  const start = replicaStatements();
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
    if (replicaStatements() >= start + rounds) return;
  }
  throw new Error(`no ${rounds} replica checks within 30 s`);
}

/** Replay paused on the replica while `work` runs (`pg_wal_replay_pause()`), resumed after, whatever happens. */
export async function whileReplayPaused<T>(cluster: ReplicaCluster, work: () => Promise<T>): Promise<T> {
  const replica = cluster.replicaUrl(DATABASE);
  await sql(replica, "SELECT pg_wal_replay_pause()");
  for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
    const [row] = await sql<{ state: string }>(replica, "SELECT pg_get_wal_replay_pause_state() AS state");
    if (row?.state === "paused") break;
    if (Date.now() > deadline) throw new Error("replay did not pause");
  }
  try {
    return await work();
  } finally {
    await sql(replica, "SELECT pg_wal_replay_resume()");
  }
}
