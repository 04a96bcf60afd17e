import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readMigrations } from "../../src/db/migrate.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 27: `fleetgate serve` processes started at once on a fresh PostgreSQL database all come up
// (migrations, the first admin, the catalogue, the generated secrets: each done once, the others
// wait for it or find it done). test/db/start-together.test.ts does the same steps in one process.

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const instances = 4;

interface Instance {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly url: Promise<string>;
  output(): string;
}

/** A `fleetgate serve` on a free port; `url` settles once it listens, or fails when it exits first. */
function serve(env: Record<string, string>): Instance {
  const child = spawn(process.execPath, [bin, "serve"], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const url = new Promise<string>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk;
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (listening) resolve(listening);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${output.slice(-4000)}`)));
  });
  url.catch(() => {}); // awaited by the test; this only keeps an early exit from being "unhandled"
  return { child, exited, url, output: () => output };
}

describe.skipIf(!databaseKinds.includes("postgres"))("fleetgate serve started together", () => {
  let test: TestDatabase;
  let started: Instance[] = [];

  beforeAll(async () => {
    test = await freshDatabase("postgres", { empty: true });
  });
  afterAll(async () => {
    // Whatever happened: no process left behind.
    for (const { child } of started)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await test?.drop();
  });

  it(`brings up ${instances} instances on a fresh database, with one admin and each migration once`, {
    timeout: 120_000,
  }, async () => {
    const env = { DATABASE_URL: test.url ?? "", ADMIN_PASSWORD: "" };
    started = Array.from({ length: instances }, () => serve(env));
    const urls = await Promise.all(
      started.map(({ url }) =>
        Promise.race([
          url,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no start in 90 s")), 90_000)),
        ]),
      ),
    );
    for (const url of urls) expect((await fetch(`${url}/ping`)).status).toBe(200);

    const admins = await test.db.query<{ username: string }>({
      text: `SELECT "username" FROM "user" WHERE "is_admin"`,
      values: [],
    });
    expect(admins).toEqual([{ username: "admin" }]);
    // Exactly one instance made it, and printed its password.
    const told = started.filter(({ output }) => /Created the admin user 'admin'/.test(output()));
    expect(told).toHaveLength(1);
    const [{ count }] = await test.db.query<{ count: number }>({
      text: `SELECT count(*)::int AS "count" FROM "_prisma_migrations"`,
      values: [],
    });
    expect(count).toBe(readMigrations().length);

    for (const { child } of started) child.kill("SIGTERM");
    expect(await Promise.all(started.map(({ exited }) => exited))).toEqual(Array(instances).fill(0));
  });
});
