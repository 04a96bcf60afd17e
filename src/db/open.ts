import type { Config } from "../config.ts";
import type { Database } from "./database.ts";
import { type EmbeddedOptions, openEmbedded } from "./embedded.ts";
import { openPostgres, type PostgresOptions } from "./postgres.ts";
import { withReplicas } from "./replicas.ts";

/**
 * PostgreSQL when DATABASE_URL is set (with its replicas from DATABASE_REPLICA_URLS for read
 * requests), otherwise the embedded database in DATA_DIR.
 */
export function openDatabase(
  config: Pick<
    Config,
    | "DATABASE_URL"
    | "DATABASE_DIRECT_URL"
    | "DATABASE_PREPARED_STATEMENTS"
    | "DATABASE_POOL_SIZE"
    | "DATA_DIR"
    | "DATABASE_STATEMENT_TIMEOUT_MS"
    | "DATABASE_WRITE_TIMEOUT_MS"
    | "DATABASE_CONNECT_TIMEOUT_MS"
    | "DATABASE_STREAM_CONNECTIONS"
  > &
    Partial<Pick<Config, "DATABASE_REPLICA_URLS" | "DATABASE_REPLICA_MAX_LAG_MS">>,
  embedded: EmbeddedOptions = {},
) {
  if (!config.DATABASE_URL) return openEmbedded(config.DATA_DIR, embedded);
  const options: PostgresOptions = {
    url: config.DATABASE_URL,
    directUrl: config.DATABASE_DIRECT_URL,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    poolSize: config.DATABASE_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    writeTimeoutMs: config.DATABASE_WRITE_TIMEOUT_MS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    ...(config.DATABASE_STREAM_CONNECTIONS ? { streamConnections: config.DATABASE_STREAM_CONNECTIONS } : {}),
  };
  const primary = openPostgres(options);
  const replicaUrls = config.DATABASE_REPLICA_URLS ?? [];
  if (replicaUrls.length === 0) return Promise.resolve<Database>(primary);
  // A replica's pool reads only: no LISTEN, no job queue, no Prisma (none is made unless asked).
  const replicas = replicaUrls.map(
    (url) => (lost: () => void) =>
      openPostgres({ ...options, url, directUrl: undefined, onConnectionLost: lost }),
  );
  return Promise.resolve<Database>(
    withReplicas(primary, replicas, { maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS ?? 1_000 }),
  );
}
