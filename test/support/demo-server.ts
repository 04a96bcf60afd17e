import type { LightMyRequestResponse as Response } from "fastify";
import { afterAll, beforeAll } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import type { DatabaseKind } from "./databases.ts";
import { startTestServer, type TestServer } from "./server.ts";

/**
 * How long a suite's set-up may take: a fresh embedded database (migrated in PGlite) and its seed
 * take tens of seconds of CPU, which on a machine shared with other runs has outlasted vitest's 60 s
 * hook timeout (test/graphql/read.test.ts waits as long for the read fixture).
 */
export const SETUP_TIMEOUT_MS = 180_000;

export interface DemoServer {
  /** Set in `beforeAll`: read it inside tests and hooks only. */
  readonly server: TestServer;
  /** A GET as the test admin (`headers` may override that). */
  get(url: string, headers?: Record<string, string>): Promise<Response>;
  prisma(): PrismaClient;
}

/**
 * Registers, in the calling `describe`, a server on a fresh `kind` database seeded with the demo
 * data, closed after its tests. A `beforeAll` registered after this call sees the server started.
 */
export function useDemoServer(kind: DatabaseKind): DemoServer {
  let server: TestServer | undefined;
  const started = () => {
    if (!server) throw new Error("the demo server is read before its beforeAll ran");
    return server;
  };
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
  }, SETUP_TIMEOUT_MS);
  afterAll(() => server?.close());
  return {
    get server() {
      return started();
    },
    get: (url, headers = {}) => started().app.inject({ method: "GET", url, headers }),
    prisma: () => started().test.db.prisma,
  };
}
