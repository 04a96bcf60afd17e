import pg from "pg";

// A database of a bench's own on BENCH_DATABASE_URL's server, made at the start and dropped at the
// end, so a run leaves nothing behind and two runs never share rows.

export interface ScratchDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops it, closing whatever connections are still open on it. */
  drop(): Promise<void>;
}

/** The server the benches use: BENCH_DATABASE_URL's (its database name is ignored). */
export const benchServerUrl = (): URL =>
  new URL(process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres");

function onDatabase(server: URL, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onServer(server: URL, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: onDatabase(server, "postgres") });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** `CREATE DATABASE <prefix>_<pid>` on the bench server; empty (migrate it with data.ts). */
export async function createScratchDatabase(
  prefix: string,
  server = benchServerUrl(),
): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}`;
  await onServer(server, `CREATE DATABASE "${name}"`);
  return {
    name,
    url: onDatabase(server, name),
    drop: () => onServer(server, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
