import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { loadConfig } from "../../../src/config.ts";
import type { Database, Executor } from "../../../src/db/database.ts";
import { openPostgres } from "../../../src/db/postgres.ts";
import { createLogger } from "../../../src/logger.ts";
import { buildModel } from "../../../src/model/registry.ts";
import { buildServer } from "../../../src/server.ts";
import type { TestDatabase } from "../databases.ts";

// fleetgate instances for the target-state cache's tests: each a server of its own (its own pool,
// LISTEN connection and caches) on one database, and every statement a request sends counted, the
// credential's lookup included (x-sql-statements counts the handler's only). The server's own work
// sends none meanwhile: no job queue, and a sweeper that runs once a day.

export interface Instance {
  readonly app: FastifyInstance;
  /** A request, with the statements the instance sent while it ran (send them one at a time). */
  inject(options: InjectOptions): Promise<LightMyRequestResponse & { statements: number }>;
  close(): Promise<void>;
}

/** `db` with every statement counted in `counter`. */
export function counting(db: Database, counter: { n: number }): Database {
  const count = () => {
    counter.n++;
  };
  const executor = (inner: Executor): Executor => ({
    query: (statement) => {
      count();
      return inner.query(statement);
    },
    script: (text) => {
      count();
      return inner.script(text);
    },
  });
  const wrapped = executor(db);
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === "query" || property === "script") return wrapped[property];
      if (property === "transaction")
        return <T>(work: (tx: Executor) => Promise<T>) => target.transaction((tx) => work(executor(tx)));
      return Reflect.get(target, property, receiver);
    },
  });
}

/** An instance on `test`'s database: on PostgreSQL with connections of its own, else sharing it. */
export async function startInstance(test: TestDatabase, poolSize = 4): Promise<Instance> {
  const own = test.url ? openPostgres({ url: test.url, poolSize }) : undefined;
  const counter = { n: 0 };
  const app = await buildServer({
    db: counting(own ?? test.db, counter),
    model: buildModel(),
    config: loadConfig({ LOG_LEVEL: "silent", COMMAND_JOBS: "false", DEVICE_OFFLINE_TIMEOUT: "86400" }),
    logger: createLogger("silent"),
  });
  return {
    app,
    async inject(options) {
      const before = counter.n;
      const response = await app.inject(options);
      return Object.assign(response, { statements: counter.n - before });
    },
    async close() {
      await app.close();
      await own?.close();
    },
  };
}
