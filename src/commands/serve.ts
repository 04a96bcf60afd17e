import { ensureAdmin } from "../accounts.ts";
import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { createLogger } from "../logger.ts";
import { buildModel } from "../model/registry.ts";
import { buildServer } from "../server.ts";

export async function run(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const db = await openDatabase(config);
  const applied = await migrate(db);
  if (applied.length) logger.info({ applied }, "migrations applied");
  const model = buildModel();
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
  const app = await buildServer({ db, model, config, logger });
  await app.listen({ host: config.HOST, port: config.PORT });

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
