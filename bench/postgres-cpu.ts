import pg from "pg";
import { cpuMicros } from "./processes.ts";

// PostgreSQL's CPU time while a bench step runs: the backends serving the bench's database plus
// the server's own background processes (WAL writer, checkpointer, autovacuum…), read from
// /proc/<pid>/stat as processes.ts reads the servers'. Only when PostgreSQL runs on this machine:
// otherwise its processes are not in /proc and the figure is left out. A backend that ends during
// a step takes its time with it; the pools keep theirs open, so that is rare.

export class PostgresCpu {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<PostgresCpu> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new PostgresCpu(client);
  }

  /** CPU time so far of each process, by pid; empty when none can be read here. */
  async sample(): Promise<Map<number, number>> {
    const { rows } = await this.client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() OR backend_type <> 'client backend'`,
    );
    const times = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        times.set(pid, cpuMicros(pid));
      } catch {
        // not on this machine, or gone since
      }
    }
    return times;
  }

  /** The CPU time (µs) used between two samples; undefined when PostgreSQL is not on this machine. */
  static between(before: Map<number, number>, after: Map<number, number>): number | undefined {
    if (after.size === 0) return undefined;
    let total = 0;
    for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
    return total;
  }

  /** WAL written and flushed (pg_stat_wal) and transactions committed on this database, so far. */
  async wal(): Promise<{ bytes: number; syncs: number; commits: number }> {
    const { rows } = await this.client.query<{ bytes: string; syncs: string; commits: string }>(
      `SELECT (SELECT wal_bytes FROM pg_stat_wal)::text AS bytes, (SELECT wal_sync FROM pg_stat_wal)::text AS syncs,
              (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text AS commits`,
    );
    const row = rows[0];
    return {
      bytes: Number(row?.bytes ?? 0),
      syncs: Number(row?.syncs ?? 0),
      commits: Number(row?.commits ?? 0),
    };
  }

  /** Connections open on this database now, this one left out. */
  async connections(): Promise<number> {
    const { rows } = await this.client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows[0]?.n ?? 0;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
