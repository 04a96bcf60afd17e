import { execFile } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./processes.ts";

// The device bench's own PostgreSQL: a primary started for the run (initdb, pg_ctl) and, for the
// replica phase, a streaming replica of it (pg_basebackup, a second postmaster), from the
// PostgreSQL installed on the machine (Debian's /usr/lib/postgresql/15/bin), each on a spare port,
// their data under one temporary directory that `remove()` deletes. As test/support/db/replica-cluster.ts
// does for the tests, but durable like a real server: the settings that decide a write's cost
// (fsync, synchronous_commit, shared_buffers, WAL, connections) are copied from
// BENCH_DATABASE_URL's server, so the figures stay comparable with the benches that run there.
// PostgreSQL refuses to run as root: as root, every program runs as `postgres` (runuser).

const run = promisify(execFile);

export const POSTGRES_BIN = process.env.BENCH_POSTGRES_BIN || "/usr/lib/postgresql/15/bin";

export function clusterTools(): boolean {
  return ["initdb", "pg_ctl", "pg_basebackup"].every((tool) => existsSync(join(POSTGRES_BIN, tool)));
}

export const asRoot = userInfo().uid === 0;

/** Runs one of PostgreSQL's programs, as `postgres` when we are root. */
export async function pgTool(tool: string, args: string[], timeout = 600_000): Promise<void> {
  const program = join(POSTGRES_BIN, tool);
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  try {
    await run(file, argv, { timeout, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${tool} ${args.join(" ")} failed: ${stderr || stdout || (error as Error).message}`);
  }
}

export function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error("no postgres user to run PostgreSQL as (it refuses root)");
  return { uid: Number(uid), gid: Number(gid) };
}

/** The settings copied from the reference server, when it answers (else PostgreSQL's defaults). */
const COPIED = [
  "shared_buffers",
  "fsync",
  "synchronous_commit",
  "full_page_writes",
  "wal_compression",
  "wal_buffers",
  "max_wal_size",
  "min_wal_size",
  "checkpoint_timeout",
  "work_mem",
  "maintenance_work_mem",
  "effective_cache_size",
  "random_page_cost",
  "max_connections",
  "commit_delay",
];

/** `name = 'value'` lines of the reference server's settings (with units), or none. */
export async function referenceSettings(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string; setting: string }>(
      `SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name = ANY($1::text[])`,
      [COPIED],
    );
    return Object.fromEntries(rows.map((row) => [row.name, row.setting]));
  } catch {
    return {};
  } finally {
    await client.end().catch(() => {});
  }
}

export interface BenchCluster {
  /** A URL of `database` on the primary. */
  primaryUrl(database: string): string;
  /** A URL of `database` on the replica; undefined before `addReplica()`. */
  replicaUrl(database: string): string | undefined;
  /** The settings the primary runs with beyond initdb's (copied from the reference server). */
  readonly settings: Readonly<Record<string, string>>;
  /** pg_basebackup of the primary, started as a hot standby streaming from it; answers how long it took. */
  addReplica(): Promise<number>;
  /** Stops the replica (fast) and deletes its data. */
  removeReplica(): Promise<void>;
  /** Stops every postmaster (immediate) and deletes the data, whatever state they are in. */
  remove(): Promise<void>;
}

/** Starts a primary (wal_level replica, ready for a streaming replica) with `settings`. */
export async function startBenchCluster(settings: Record<string, string>): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-bench-cluster-"));
  const primaryDir = join(dir, "primary");
  const replicaDir = join(dir, "replica");
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const primaryPort = await freePort();
  let replicaPort: number | undefined;
  const ctl = (data: string, ...args: string[]) =>
    pgTool("pg_ctl", ["-D", data, "-l", `${data}.log`, "-w", "-t", "300", ...args]);
  const started = new Set<string>();
  const url = (port: number, database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const conf = [
    `port = ${primaryPort}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    "wal_level = replica",
    "max_wal_senders = 4",
    "hot_standby = on",
    // The replica must not cancel its readers' statements for replay, nor the primary vacuum away
    // what they read: as an operator runs a read replica.
    "hot_standby_feedback = on",
    ...Object.entries(settings).map(([name, value]) => `${name} = ${quote(value)}`),
  ].join("\n");
  const cluster: BenchCluster = {
    settings,
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => (replicaPort === undefined ? undefined : url(replicaPort, database)),
    async addReplica() {
      const began = performance.now();
      await pgTool("pg_basebackup", [
        ...["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres"],
        ...["-D", replicaDir, "-R", "-X", "stream", "-c", "fast"],
      ]);
      replicaPort = await freePort();
      // The copied postgresql.conf names the primary's port: the replica's own comes last and wins.
      appendFileSync(join(replicaDir, "postgresql.conf"), `\nport = ${replicaPort}\n`);
      started.add(replicaDir);
      await ctl(replicaDir, "start");
      return performance.now() - began;
    },
    async removeReplica() {
      if (started.has(replicaDir)) await ctl(replicaDir, "-m", "fast", "stop").catch(() => {});
      started.delete(replicaDir);
      replicaPort = undefined;
      rmSync(replicaDir, { recursive: true, force: true });
      rmSync(`${replicaDir}.log`, { force: true });
    },
    async remove() {
      for (const data of [...started].reverse()) await ctl(data, "-m", "immediate", "stop").catch(() => {});
      started.clear();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await pgTool("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
    appendFileSync(join(primaryDir, "postgresql.conf"), `\n${conf}\n`);
    started.add(primaryDir);
    await ctl(primaryDir, "start");
  } catch (error) {
    await cluster.remove();
    throw error;
  }
  return cluster;
}

/** Until the replica at `replicaUrl` has replayed everything the primary had written when called. */
export async function replicaCaughtUp(primaryUrl: string, replicaUrl: string, timeoutMs = 600_000) {
  const query = async (url: string, text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows[0] as Record<string, unknown>;
    } finally {
      await client.end();
    }
  };
  const { position } = (await query(primaryUrl, "SELECT pg_current_wal_lsn()::text AS position")) as {
    position: string;
  };
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const row = await query(replicaUrl, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [
      position,
    ]).catch(() => undefined);
    if (row?.done === true) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the replica did not catch up within ${timeoutMs / 1000} s`);
}

/** runDevicesBench's replica hooks on `cluster`: add one replica of `database` (caught up), remove it. */
export function replicaHooks(
  cluster: BenchCluster,
  database: string,
  log: (message: string) => void = () => {},
): { addReplica(): Promise<string>; removeReplica(): Promise<void> } {
  return {
    async addReplica() {
      const ms = await cluster.addReplica();
      log(`replica: pg_basebackup and start took ${(ms / 1000).toFixed(1)} s; waiting for it to catch up`);
      const url = cluster.replicaUrl(database) as string;
      await replicaCaughtUp(cluster.primaryUrl(database), url);
      return url;
    },
    removeReplica: () => cluster.removeReplica(),
  };
}
