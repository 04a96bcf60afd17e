import type { Logger } from "pino";
import { ensureAdmin } from "../accounts.ts";
import { type Config, loadConfig } from "../config.ts";
import type { Database } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { createLogger } from "../logger.ts";
import { buildModel } from "../model/registry.ts";
import type { Model } from "../model/types.ts";

// Milliseconds since the process started, for the start-up line in the log.
const since = () => Math.round(performance.now());
const loaded = since();

export async function run(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const model = buildModel();
  // The database opens (PGlite compiles its WebAssembly off the main thread; PostgreSQL forks a
  // backend) while the HTTP side's modules load: neither waits for the other.
  const server = import("../server.ts");
  server.catch(() => {}); // awaited below; this only keeps a failed import from being "unhandled" meanwhile
  const db = await prepareDatabase(config, model, logger);
  const databaseReady = since();
  const { buildServer } = await server.catch(async (error) => {
    await db.close();
    throw error;
  });
  const app = await buildServer({ db, model, config, logger });
  await app.listen({ host: config.HOST, port: config.PORT });
  logger.info({ startupMs: { modules: loaded, database: databaseReady, listening: since() } }, "started");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping: finishing in-flight requests");
    // close() stops accepting, waits for in-flight requests, then the pool closes.
    await app.close();
    await db.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

/** Opens the database, applies pending migrations and makes sure there is an admin. */
async function prepareDatabase(config: Config, model: Model, logger: Logger): Promise<Database> {
  const db = await openDatabase(config);
  try {
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, "migrations applied");
    const admin = await ensureAdmin(db, model, {
      username: config.ADMIN_USERNAME,
      password: config.ADMIN_PASSWORD,
    });
    if (admin.created && admin.generatedPassword) {
      process.stderr.write(
        `\nCreated the admin user '${config.ADMIN_USERNAME}' with password: ${admin.generatedPassword}\n` +
          "It is shown this once; set ADMIN_PASSWORD before the first start to choose it.\n\n",
      );
    }
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}
