import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { spawnFleetgate } from "../support/processes.ts";

// Issue 31: the credentials of `supervisor` and `fleet` show in `ps` when given as flags, so each is
// also taken from the environment (a flag given wins), and the help says so. The fleet simulator's
// FLEETGATE_PROVISIONING_KEY against a real server is test/docs/proxy-example.test.ts.

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const run = promisify(execFile);

describe("credentials from the environment", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-credentials-"));
  const clean = {
    ...process.env,
    FLEETGATE_TOKEN: "",
    FLEETGATE_PROVISIONING_KEY: "",
    SUPERVISOR_API_KEY: "",
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The key an unmanaged supervisor reports once it listens. */
  async function supervisorKey(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
    const started = await spawnFleetgate(
      ["supervisor", "--unmanaged", "--port", "0", "--data-dir", join(dir, `dev-${Math.random()}`), ...args],
      {
        what: "supervisor",
        timeoutMs: 60_000,
        env,
        ready: (stdout) =>
          stdout.includes("\n")
            ? (JSON.parse(stdout.split("\n")[0] as string) as { apiKey: string })
            : undefined,
      },
    );
    started.child.kill("SIGTERM");
    await started.exited;
    return started.ready.apiKey;
  }

  it("supervisor: SUPERVISOR_API_KEY when --api-key is not given; the flag wins; cloud credentials are no unmanaged device's", async () => {
    // FLEETGATE_TOKEN exported for other commands does not make an unmanaged device refuse to start.
    const env = { ...clean, SUPERVISOR_API_KEY: "key_from_environment", FLEETGATE_TOKEN: "a-user-token" };
    expect(await supervisorKey([], env)).toBe("key_from_environment");
    expect(await supervisorKey(["--api-key", "key_from_flag"], env)).toBe("key_from_flag");
  });

  it("fleet: both cloud credentials in the environment is an error that names them", async () => {
    await expect(
      run(process.execPath, [bin, "fleet", "--api", "http://127.0.0.1:9", "--fleet", "1", "--devices", "1"], {
        env: { ...clean, FLEETGATE_TOKEN: "t", FLEETGATE_PROVISIONING_KEY: "k" },
      }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        "FLEETGATE_PROVISIONING_KEY and FLEETGATE_TOKEN are both set: unset one, or give --provisioning-key or --token",
      ),
    });
    await expect(
      run(process.execPath, [bin, "fleet", "--api", "http://127.0.0.1:9", "--fleet", "1", "--devices", "1"], {
        env: clean,
      }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        "--provisioning-key or --token (or $FLEETGATE_PROVISIONING_KEY or $FLEETGATE_TOKEN) is required",
      ),
    });
  });

  it("the help of both commands names the variables", async () => {
    const help = async (command: string) =>
      (await run(process.execPath, [bin, command, "--help"], { env: clean })).stdout.replace(/\s+/g, " ");
    const supervisor = await help("supervisor");
    const fleet = await help("fleet");
    for (const text of [supervisor, fleet]) {
      expect(text).toMatch(/--provisioning-key <key> .*\$FLEETGATE_PROVISIONING_KEY/);
      expect(text).toMatch(/--token <token> .*\$FLEETGATE_TOKEN/);
      expect(text).toContain("Credentials on a command line show in `ps`");
    }
    expect(supervisor).toMatch(/--api-key <key> .*\$SUPERVISOR_API_KEY/);
  });
});
