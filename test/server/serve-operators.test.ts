import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds, freshDatabase } from "../support/databases.ts";
import { fleetgateBin, startServer } from "../support/processes.ts";

// Issue 47, "Operators": a second server on a port in use stops before it changes anything and
// names the setting; `.env` is read by `npm start` (and every command); the last log line says the
// server stopped and why.

/** The environment of a spawned command without the settings a test means to give it itself. */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATA_DIR: _dir, DATABASE_URL: _url, PORT: _port, ADMIN_USERNAME: _admin, ...rest } = process.env;
  return { ...rest, HOST: "127.0.0.1", LOG_LEVEL: "info", ...env };
}

/** Runs `fleetgate serve` until it exits by itself; what it printed and its exit code. */
function serveUntilExit(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [fleetgateBin, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    // "close": after its output streams ended, so nothing it printed is missed.
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const lastLogLine = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");

describe.each(databaseKinds)("a port in use, on %s", (kind) => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ host: "127.0.0.1", port: 0 }, resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it("stops the first start before it changes anything, and names PORT", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fleetgate-port-"));
    const dataDir = join(dir, "data");
    const database = kind === "postgres" ? await freshDatabase(kind, { empty: true }) : undefined;
    try {
      const run = await serveUntilExit(
        cleanEnv({
          PORT: String(port),
          DATA_DIR: dataDir,
          DATABASE_URL: database?.url ?? "",
          ADMIN_PASSWORD: "",
        }),
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is already in use.*set PORT`));
      // Nothing of a first start happened: no admin (nor its one-time password), no migration.
      expect(run.stderr).not.toMatch(/Created the admin user/);
      expect(run.stdout).not.toMatch(/first start|migrations applied/);
      expect(lastLogLine(run.stdout)).toMatchObject({
        msg: "stopped",
        reason: expect.stringMatching(/set PORT/),
      });
      if (kind === "embedded") expect(existsSync(dataDir)).toBe(false);
      else {
        const client = new pg.Client({ connectionString: database?.url });
        await client.connect();
        const tables = await client.query(
          "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
        );
        await client.end();
        expect(tables.rows[0].n).toBe(0);
      }
    } finally {
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("settings and the last line", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "fleetgate-env-file-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads .env from the directory it runs in, the environment winning, and logs stopped last", async () => {
    const project = join(dir, "project");
    mkdirSync(project);
    // PORT=1 would need privileges: the environment's PORT=0 must win over the file's.
    writeFileSync(
      join(project, ".env"),
      `DATA_DIR=${join(dir, "data-from-env")}\nADMIN_USERNAME=operator-from-env\nADMIN_PASSWORD=\nPORT=1\n`,
    );
    const env = cleanEnv({ PORT: "0" });
    const server = await startServer(env as Record<string, string>, { cwd: project });
    try {
      expect((await fetch(`${server.url}/ping`)).status).toBe(200);
      expect(server.stdout()).toMatch(/"msg":"settings read from .env"/);
      expect(server.stderr()).toMatch(/Created the admin user 'operator-from-env'/);
      expect(existsSync(join(dir, "data-from-env"))).toBe(true);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const stdout = server.child.stdout;
    if (stdout && !stdout.readableEnded) await once(stdout, "end");
    expect(lastLogLine(server.stdout())).toMatchObject({ msg: "stopped", signal: "SIGTERM" });
  });
});
