import { appendFileSync, chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asRoot, clusterTools, pgTool, postgresUser } from "../../../bench/postgres-cluster.ts";
import { freePort } from "../../../bench/processes.ts";

export { clusterTools };

// A real PostgreSQL primary and a real streaming replica, for test/db/replicas.test.ts: initdb,
// pg_basebackup and a second postmaster, from the PostgreSQL 15 installed on the machine, each on a
// spare port, their data under a temporary directory. PostgreSQL refuses to run as root: as root,
// every command runs as the `postgres` user (runuser), and the directory is theirs. The programs
// are run as the device bench runs its own cluster (bench/postgres-cluster.ts).

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
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
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
