import type { Config } from "../config.ts";
import type { Database } from "./database.ts";
import { type EmbeddedOptions, openEmbedded } from "./embedded.ts";
import { openPostgres } from "./postgres.ts";

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded database in DATA_DIR. */
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
  >,
  embedded: EmbeddedOptions = {},
) {
  return config.DATABASE_URL
    ? Promise.resolve<Database>(
        openPostgres({
          url: config.DATABASE_URL,
          directUrl: config.DATABASE_DIRECT_URL,
          preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
          poolSize: config.DATABASE_POOL_SIZE,
          statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
          writeTimeoutMs: config.DATABASE_WRITE_TIMEOUT_MS,
          connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
          ...(config.DATABASE_STREAM_CONNECTIONS
            ? { streamConnections: config.DATABASE_STREAM_CONNECTIONS }
            : {}),
        }),
      )
    : openEmbedded(config.DATA_DIR, embedded);
}
