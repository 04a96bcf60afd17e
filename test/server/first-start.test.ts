import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrationsDir } from "../../src/db/migrate.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { spawnFleetgate } from "../support/processes.ts";

// Issue 31: a first start takes seconds; it says what it does as each step begins (migrations, the
// admin, the catalogue), before the step's own result, and a later start says none of it.

interface Line {
  readonly msg: string;
  readonly time: number;
}

const migrations = readdirSync(migrationsDir, { withFileTypes: true }).filter((entry) =>
  entry.isDirectory(),
).length;

/** `fleetgate serve` until it listens, then stopped: its JSON log. A first start on a busy machine takes long. */
async function serveOnce(env: Record<string, string>): Promise<string> {
  const server = await spawnFleetgate(["serve"], {
    what: "server",
    timeoutMs: 150_000,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    ready: (stdout) => (/"msg":"started"/.test(stdout) ? true : undefined),
  });
  server.child.kill("SIGTERM");
  await server.exited;
  return server.stdout();
}

/** The messages of the JSON log, in order. */
const messages = (stdout: string): Line[] =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Line);

describe.each(databaseKinds)("the first start on %s", { timeout: 400_000 }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-first-start-"));
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("announces each step as it begins; a later start announces none", async () => {
    database = kind === "postgres" ? await freshDatabase(kind, { empty: true }) : undefined;
    const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: database?.url ?? "", ADMIN_PASSWORD: "" };
    const first = await serveOnce(env);
    const lines = messages(first);
    const at = (pattern: RegExp) => {
      const index = lines.findIndex((line) => pattern.test(line.msg));
      expect(index, `${pattern} in\n${first}`).toBeGreaterThanOrEqual(0);
      return index;
    };
    const order = [
      at(new RegExp(`^first start: applying ${migrations} migrations$`)),
      at(/^migrations applied$/),
      at(/^first start: creating the admin user 'admin'$/),
      at(/^first start: loading the shipped device-type catalogue/),
      at(/^loaded the default device-type catalogue$/),
      at(/^Server listening at/),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    if (kind === "embedded")
      expect(at(/^creating the embedded database in/)).toBeLessThan(order[0] as number);
    // Written as they happened, not all at the end.
    expect((lines[order[5] as number] as Line).time).toBeGreaterThan(
      (lines[order[0] as number] as Line).time,
    );

    const again = await serveOnce(env);
    expect(again).not.toContain("first start:");
    expect(again).not.toContain("migrations applied");
  });
});
