import type { InjectOptions, LightMyRequestResponse as Response } from "fastify";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { hashPassword } from "../../src/auth/passwords.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { type DatabaseKind, freshDatabase, type TestDatabase } from "./databases.ts";

export interface TestServer {
  /** `inject` sends the test admin's key unless the request sets `authorization` itself. */
  readonly app: { inject(options: InjectOptions): Promise<Response> };
  readonly test: TestDatabase;
  /** `http://127.0.0.1:<port>`, for real clients. */
  readonly url: string;
  /** An API key of an admin user, for real clients: `Authorization: Bearer <adminKey>`. */
  readonly adminKey: string;
  close(): Promise<void>;
}

// The test admin lives far above the ids the tests create, so it does not move their serial ids.
const TEST_ADMIN_ID = 1_000_000;

/**
 * The test admin's password hash, made once per worker: scrypt at the server's cost takes 50–250 ms
 * of CPU, and every test server has an admin; the hash is as the server makes it, salt included.
 */
let adminPasswordHash: Promise<string> | undefined;
export const testAdminPasswordHash = (): Promise<string> =>
  (adminPasswordHash ??= hashPassword("test-admin-password"));

/** Makes the test admin (once per database) and an API key of theirs. */
export async function testAdminKey(test: TestDatabase): Promise<string> {
  await test.db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [TEST_ADMIN_ID] });
  await test.db.query({
    text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
           VALUES ($1::int4, $1::int4, 'test-admin', 'test-admin@localhost', $2::text, 'test', true)`,
    values: [TEST_ADMIN_ID, await testAdminPasswordHash()],
  });
  return createApiKey(test.db, { actor: TEST_ADMIN_ID, name: "tests" });
}

/** The real server on a fresh database, listening on a free loopback port. */
export async function startTestServer(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<TestServer> {
  const test = await freshDatabase(kind);
  const config = loadConfig({ LOG_LEVEL: "silent", ...env });
  const app = await buildServer({ db: test.db, model: buildModel(), config, logger: createLogger("silent") });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const adminKey = await testAdminKey(test);
  const authorization = `Bearer ${adminKey}`;
  return {
    app: { inject: (options) => app.inject({ ...options, headers: { authorization, ...options.headers } }) },
    test,
    url,
    adminKey,
    async close() {
      await app.close();
      await test.drop();
    },
  };
}
