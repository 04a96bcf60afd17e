import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A real PgBouncer in transaction pooling mode, for test/db/pgbouncer.test.ts: its own ini in a
// temporary directory, its own port, in the foreground (so stopping it is killing one child).

/** `pgbouncer` on PATH, or where Debian's package puts it (/usr/sbin is not on every PATH). */
export function pgbouncerBinary(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/sbin"];
  return dirs.map((dir) => join(dir, "pgbouncer")).find((path) => existsSync(path));
}

export interface PgBouncer {
  /** A URL of `database` (a name given to startPgBouncer) through the pooler. */
  url(database: string): string;
  /** What PgBouncer logged so far. */
  log(): string;
  stop(): Promise<void>;
}

/** A database PgBouncer serves: a database of `server`'s, and its server connections at most. */
export interface PooledDatabase {
  readonly dbname: string;
  readonly poolSize: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepting(port: number, deadline: number, exited: () => boolean): Promise<void> {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1");
    });
    if (open) return;
    if (exited() || Date.now() > deadline) throw new Error("PgBouncer did not start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts PgBouncer (pool_mode = transaction) in front of `server` (a PostgreSQL URL whose user and
 * password PgBouncer logs in with), serving `databases` by name to any client as that user.
 */
export async function startPgBouncer(
  binary: string,
  server: string,
  databases: Record<string, PooledDatabase>,
): Promise<PgBouncer> {
  const target = new URL(server);
  const user = decodeURIComponent(target.username || "postgres");
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-pgbouncer-"));
  const entries = Object.entries(databases).map(
    ([name, { dbname, poolSize }]) =>
      `${name} = host=${target.hostname} port=${target.port || 5432} dbname=${dbname} user=${user}` +
      `${password ? ` password=${password}` : ""} pool_size=${poolSize}`,
  );
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    [
      "[databases]",
      ...entries,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "pool_mode = transaction",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      `admin_users = ${user}`,
      "max_client_conn = 200",
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`);
  // PgBouncer refuses to run as root: as root, it is told to become `postgres`, who must read these.
  const root = process.getuid?.() === 0;
  if (root) for (const path of [dir, ini, join(dir, "users.txt")]) chmodSync(path, 0o755);
  const child: ChildProcess = spawn(binary, [...(root ? ["-u", "postgres"] : []), ini], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  // A test process that ends without its afterAll (a crash, a hook's time-out) leaves no pooler behind.
  const orphaned = () => child.kill("SIGTERM");
  process.once("exit", orphaned);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const stop = async () => {
    process.off("exit", orphaned);
    if (!gone) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await accepting(port, Date.now() + 10_000, () => gone);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}:\n${log}`);
  }
  return {
    url: (database) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    log: () => log,
    stop,
  };
}
