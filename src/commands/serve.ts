import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import packageJson from "../../package.json" with { type: "json" };
import { ensureAdmin } from "../accounts.ts";
import { loadDefaultCatalogue } from "../catalogue/defaults.ts";
import { type Config, loadConfig } from "../config.ts";
import type { Database } from "../db/database.ts";
import { isNewDatabase, migrate, readMigrations } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { beginShutdown } from "../http/readiness.ts";
import { createLogger } from "../logger.ts";
import { buildModel } from "../model/registry.ts";
import type { Model } from "../model/types.ts";
import { type AdminOrigin, baseUrl, databaseInUse, startBanner } from "./banner.ts";
import { listenForCommands } from "./control-server.ts";
import { envFile } from "./env-file.ts";
import { failureMessage } from "./failure-message.ts";
import { releaseFreedMemory } from "./memory-release.ts";
import { checkPortFree, listenFailure } from "./port-check.ts";

// Milliseconds since the process started, for the start-up line in the log.
const since = () => Math.round(performance.now());
const loaded = since();

export async function run(): Promise<void> {
  const config = loadConfig();
  // A person at a terminal reads lines and a banner; everything else (CI, tests, log shippers)
  // reads exactly the JSON lines.
  const terminal = process.stdout.isTTY === true;
  const logger = createLogger(
    config.LOG_LEVEL,
    terminal ? (await import("./pretty-log.ts")).prettyDestination() : undefined,
  );
  try {
    await serve(config, logger, terminal);
  } catch (error) {
    // The log's last line says the server stopped, and why (the CLI prints the message too).
    logger.error({ reason: failureMessage(error, config.DATABASE_URL) }, "stopped");
    throw error;
  }
}

async function serve(config: Config, logger: Logger, terminal: boolean): Promise<void> {
  if (existsSync(envFile)) logger.info({ file: envFile }, "settings read from .env");
  await checkPortFree(config.HOST, config.PORT);
  const model = buildModel();
  // The database opens (PGlite compiles its WebAssembly off the main thread; PostgreSQL forks a
  // backend) while the HTTP side's modules load: neither waits for the other.
  const server = import("../server.ts");
  server.catch(() => {}); // awaited below; this only keeps a failed import from being "unhandled" meanwhile
  const { db, admin } = await prepareDatabase(config, model, logger);
  const databaseReady = since();
  const { buildServer } = await server.catch(async (error) => {
    await db.close();
    throw error;
  });
  const app = await buildServer({ db, model, config, logger });
  // The embedded database is this process's alone: `fleetgate seed`, `user add`, … run here meanwhile.
  const commands =
    db.kind === "embedded" ? await listenForCommands(config.DATA_DIR, db, model, logger) : undefined;
  await app.listen({ host: config.HOST, port: config.PORT }).catch(async (error) => {
    await commands?.close();
    await db.close();
    throw listenFailure(error, config.HOST, config.PORT) ?? error;
  });
  logger.info({ startupMs: { modules: loaded, database: databaseReady, listening: since() } }, "started");
  // What the start's own work freed (migrations, the catalogue, PGlite's compilation), and from then on.
  releaseFreedMemory(config.MEMORY_RELEASE_INTERVAL_MS, logger);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // A balancer polling /readyz sees 503 and stops sending new requests while we still serve them.
    beginShutdown(app);
    if (config.SHUTDOWN_DELAY > 0) {
      logger.info({ signal, delaySeconds: config.SHUTDOWN_DELAY }, "stopping: /readyz answers 503");
      await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DELAY * 1000));
    }
    logger.info({ signal }, "stopping: finishing in-flight requests");
    // Past the grace, the connections still open are closed: their requests are abandoned (a
    // statement running for one is cancelled), so the close below can finish.
    const grace = setTimeout(() => {
      logger.warn({ graceSeconds: config.SHUTDOWN_GRACE }, "stopping: grace over, closing open connections");
      app.server.closeAllConnections();
    }, config.SHUTDOWN_GRACE * 1000);
    grace.unref();
    // close() stops accepting, waits for in-flight requests and commands, then the pool closes.
    await Promise.all([app.close(), commands?.close()]);
    clearTimeout(grace);
    await db.close();
    logger.info({ signal }, "stopped");
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  // Last, once Ctrl-C (which the banner offers) stops the server cleanly.
  if (terminal) {
    process.stdout.write(
      startBanner({
        version: packageJson.version,
        url: baseUrl(app.server.address() as AddressInfo),
        graphiql: config.GRAPHQL_GRAPHIQL,
        database: databaseInUse(config),
        adminUsername: config.ADMIN_USERNAME,
        admin,
      }),
    );
  }
}

/**
 * Opens the database, applies pending migrations, makes sure there is an admin, and loads the
 * shipped device-type catalogue into a database that never had it.
 */
async function prepareDatabase(
  config: Config,
  model: Model,
  logger: Logger,
): Promise<{ db: Database; admin: AdminOrigin }> {
  const db = await openDatabase(config, { progress: (message) => logger.info(message) });
  try {
    // A first start takes seconds (every migration, the admin's password hash, the catalogue with
    // its host OS fleets): each step is announced as it begins, so a person sees it progress.
    const first = await isNewDatabase(db);
    const step = (message: string) => {
      if (first) logger.info(`first start: ${message}`);
    };
    step(`applying ${readMigrations().length} migrations`);
    let began = since();
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied, ms: since() - began }, "migrations applied");
    step(`creating the admin user '${config.ADMIN_USERNAME}'`);
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
    step("loading the shipped device-type catalogue and its host OS fleets");
    began = since();
    const deviceTypes = await loadDefaultCatalogue(db);
    if (deviceTypes)
      logger.info({ deviceTypes, ms: since() - began }, "loaded the default device-type catalogue");
    const origin = !admin.created ? "existing" : admin.generatedPassword ? "generated" : "configured";
    return { db, admin: origin };
  } catch (error) {
    await db.close();
    throw error;
  }
}
