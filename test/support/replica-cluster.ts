import { execFile } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

// A real PostgreSQL primary and a real streaming replica, for test/db/replicas.test.ts: initdb,
// pg_basebackup and a second postmaster, from the PostgreSQL 15 installed on the machine, each on a
// spare port, their data under a temporary directory. PostgreSQL refuses to run as root: as root,
// every command runs as the `postgres` user (runuser), and the directory is theirs.

const run = promisify(execFile);

/** Where Debian's postgresql-15 puts the server's programs. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

export function clusterTools(): boolean {
  return ["initdb", "pg_ctl", "pg_basebackup"].every((tool) => existsSync(join(POSTGRES_BIN, tool)));
}

export interface ReplicaCluster {
  /** A URL of `database` on the primary. */
  primaryUrl(database: string): string;
  /** A URL of `database` on the replica. */
  replicaUrl(database: string): string;
  /** `pg_ctl stop` of the replica (fast), and `start` again, waiting until it accepts connections. */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops both postmasters and removes their data, whatever state they are in. */
  remove(): Promise<void>;
}

async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const asRoot = userInfo().uid === 0;

/** Runs one of PostgreSQL's programs, as `postgres` when we are root. */
async function pgTool(tool: string, args: string[]): Promise<void> {
  const program = join(POSTGRES_BIN, tool);
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  try {
    await run(file, argv, { timeout: 120_000 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${tool} ${args.join(" ")} failed: ${stderr || stdout || (error as Error).message}`);
  }
}

// Fast and small: a test cluster keeps nothing through a crash, and the machine is shared.
const settings = (port: number, dir: string) => `
port = ${port}
listen_addresses = '127.0.0.1'
unix_socket_directories = '${dir}'
wal_level = replica
max_wal_senders = 4
hot_standby = on
fsync = off
full_page_writes = off
shared_buffers = 32MB
max_connections = 40
`;

/** Starts a primary, takes a base backup of it, and starts that as a hot standby streaming from it. */
export async function startReplicaCluster(): Promise<ReplicaCluster> {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-replicas-"));
  const primaryDir = join(dir, "primary");
  const replicaDir = join(dir, "replica");
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const [primaryPort, replicaPort] = [await sparePort(), await sparePort()];
  const ctl = (data: string, ...args: string[]) =>
    pgTool("pg_ctl", ["-D", data, "-l", `${data}.log`, "-w", "-t", "120", ...args]);
  let started: string[] = [];
  const cluster: ReplicaCluster = {
    primaryUrl: (database) => `postgres://postgres@127.0.0.1:${primaryPort}/${database}`,
    replicaUrl: (database) => `postgres://postgres@127.0.0.1:${replicaPort}/${database}`,
    stopReplica: () => ctl(replicaDir, "-m", "fast", "stop"),
    startReplica: () => ctl(replicaDir, "start"),
    async remove() {
      for (const data of started.reverse()) await ctl(data, "-m", "immediate", "stop").catch(() => {});
      started = [];
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await pgTool("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
    appendFileSync(join(primaryDir, "postgresql.conf"), settings(primaryPort, dir));
    started.push(primaryDir);
    await ctl(primaryDir, "start");
    await pgTool("pg_basebackup", [
      ...["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres"],
      ...["-D", replicaDir, "-R", "-X", "stream", "--no-sync"],
    ]);
    // The copied postgresql.conf names the primary's port: the replica's own comes last and wins.
    appendFileSync(join(replicaDir, "postgresql.conf"), `port = ${replicaPort}\n`);
    started.push(replicaDir);
    await ctl(replicaDir, "start");
  } catch (error) {
    await cluster.remove();
    throw error;
  }
  return cluster;
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error("no postgres user to run PostgreSQL as (it refuses root)");
  return { uid: Number(uid), gid: Number(gid) };
}
