import type { FastifyInstance } from "fastify";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { type DatabaseKind, freshDatabase, type TestDatabase } from "./databases.ts";

export interface TestServer {
  readonly app: FastifyInstance;
  readonly test: TestDatabase;
  /** `http://127.0.0.1:<port>`, for real clients. */
  readonly url: string;
  close(): Promise<void>;
}

/** The real server on a fresh database, listening on a free loopback port. */
export async function startTestServer(kind: DatabaseKind): Promise<TestServer> {
  const test = await freshDatabase(kind);
  const config = loadConfig({ LOG_LEVEL: "silent" });
  const app = await buildServer({
    db: test.db,
    model: buildModel(),
    config,
    logger: createLogger("silent"),
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    app,
    test,
    url,
    async close() {
      await app.close();
      await test.drop();
    },
  };
}
