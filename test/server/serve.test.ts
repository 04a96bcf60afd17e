import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { startServer } from "../support/processes.ts";

describe.each(databaseKinds)("fleetgate serve on %s", (kind) => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (kind === "embedded") {
      const dir = mkdtempSync(join(tmpdir(), "fleetgate-serve-"));
      env = { DATA_DIR: dir, DATABASE_URL: "" };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const test: TestDatabase = await freshDatabase(kind, { empty: true });
      await test.db.close();
      env = { DATABASE_URL: test.url ?? "" };
      cleanup = () => test.drop().catch(() => {});
    }
  });
  afterAll(() => cleanup());

  it("migrates, creates the admin once, answers /ping, stops on SIGTERM and keeps its data", async () => {
    const first = await startServer({ ...env, ADMIN_PASSWORD: "" });
    const ping = await fetch(`${first.url}/ping`);
    expect(ping.status).toBe(200);
    expect(await ping.text()).toBe("OK");
    expect(first.stderr()).toMatch(/Created the admin user 'admin' with password: \S{20,}/);
    expect(await first.stop()).toBe(0);

    // The admin persisted: a second start creates nobody.
    const second = await startServer(env);
    expect((await fetch(`${second.url}/ping`)).status).toBe(200);
    expect(second.stderr()).not.toMatch(/Created the admin user/);
    expect(await second.stop()).toBe(0);
  });

  it("answers an unknown path with 404", async () => {
    const server = await startServer(env);
    try {
      expect((await fetch(`${server.url}/no/such/thing`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  });
});
