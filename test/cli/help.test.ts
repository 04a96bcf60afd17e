import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { fleetSchema } from "../../src/commands/fleet.ts";
import { parseSupervisorArgs, SUPERVISOR_USAGE } from "../../src/supervisor/options.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};
const run = promisify(execFile);

/** Every `--flag` a usage text names. */
const flagsIn = (text: string) => new Set([...text.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]));

// Each command's flags, from the parsers that own them where there is one: the help cannot miss one.
const commands: [string[], string[]][] = [
  [[], ["--version", "--help"]],
  [["serve"], ["--help"]],
  [["migrate"], ["--help"]],
  [["seed"], ["--demo"]],
  [["user"], ["add"]],
  [
    ["user", "add"],
    ["<username>", "--email <email>", "--password <password>", "--admin"],
  ],
  [["org"], ["add"]],
  [
    ["org", "add"],
    ["<handle>", "--name <name>", "--owner <username>"],
  ],
  [["catalogue"], ["import", "export"]],
  [["catalogue", "import"], ["<file.json>"]],
  [["catalogue", "export"], ["--help"]],
  [["supervisor"], [...flagsIn(SUPERVISOR_USAGE)]],
  [["fleet"], Object.keys(fleetSchema.shape).map((flag) => `--${flag}`)],
];

describe("fleetgate --help, for every command", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-help-"));
  const dataDir = join(dir, "data");
  // Were anything started, it would open this data directory, or listen on this port and never exit.
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", PORT: "0", LOG_LEVEL: "info" };
  const fleetgate = (...args: string[]) => run(process.execPath, [bin, ...args], { env, timeout: 30_000 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(commands)(
    "fleetgate %j --help exits 0, lists its options and examples, and starts nothing",
    async (path, options) => {
      const { stdout, stderr } = await fleetgate(...path, "--help");
      expect(stdout).toContain(`Usage: ${["fleetgate", ...path].join(" ")} `);
      for (const option of options) expect(stdout).toContain(option);
      expect(stdout).toMatch(/Examples:\n {2}(npm|npx fleetgate) /);
      expect(stderr).toBe("");
      expect(existsSync(dataDir)).toBe(false);
    },
  );

  it("shows the defaults the parsers apply", async () => {
    const help = (await fleetgate("fleet", "--help")).stdout.replace(/\s+/g, " ");
    const fleet = fleetSchema.parse({ api: "http://127.0.0.1:1", fleet: "1", devices: "1" });
    for (const flag of [
      "data-dir",
      "concurrency",
      "services",
      "poll-interval",
      "heartbeat-interval",
      "download-ms",
      "install-ms",
      "delay-ms",
      "error-rate",
    ] as const) {
      expect(help).toMatch(new RegExp(`--${flag} <[^>]+> [^(]*\\(default: ${fleet[flag]}\\)`));
    }
    expect(help).toContain(`(default: ${fleet["supervisor-version"].join(",")})`);

    const supervisorHelp = (await fleetgate("supervisor", "--help")).stdout.replace(/\s+/g, " ");
    const supervisor = parseSupervisorArgs(["--unmanaged"], {}, () => {});
    const defaults = {
      host: supervisor.host,
      "supervisor-version": supervisor.supervisorVersion,
      services: supervisor.services,
      "poll-interval": supervisor.pollIntervalMs / 1000,
      "download-ms": supervisor.timings.downloadMs,
      "install-ms": supervisor.timings.installMs,
      "step-ms": supervisor.timings.stepMs,
      "blink-ms": supervisor.timings.blinkMs,
      "app-id": supervisor.appId,
      port: supervisor.port,
    };
    for (const [flag, value] of Object.entries(defaults)) {
      expect(supervisorHelp).toMatch(new RegExp(`--${flag} <[^>]+> [^(]*\\(default: [^)]*${value}\\)`));
    }
    expect(supervisor.dataDir.endsWith(join("data", "supervisor"))).toBe(true);
    expect(supervisorHelp).toContain("(default: data/supervisor)");
  });

  it("prints its version, and its help without a command", async () => {
    expect((await fleetgate("--version")).stdout.trim()).toBe(version);
    expect((await fleetgate("-v")).stdout.trim()).toBe(version);
    const bare = await fleetgate();
    expect(bare.stdout).toContain("Usage: fleetgate [options] [command]");
    expect((await fleetgate("help", "fleet")).stdout).toContain("Usage: fleetgate fleet ");
  });

  it("names the command's help on an unknown option, a missing argument or an unknown command", async () => {
    const cases: [string[], RegExp][] = [
      [["fleet", "--bogus"], /unknown option '--bogus'[\s\S]*npx fleetgate fleet --help/],
      [["serve", "--port", "1"], /unknown option '--port'[\s\S]*npx fleetgate serve --help/],
      [
        ["catalogue", "import"],
        /missing required argument 'file.json'[\s\S]*npx fleetgate catalogue import --help/,
      ],
      [["user", "add", "carol"], /required option '--email <email>'[\s\S]*npx fleetgate user add --help/],
      [
        ["supervisor", "--unmanged"],
        /unknown option '--unmanged'[\s\S]*Did you mean --unmanaged\?[\s\S]*npx fleetgate supervisor --help/,
      ],
      [["bogus"], /unknown command 'bogus'[\s\S]*npx fleetgate --help/],
    ];
    for (const [args, message] of cases) {
      await expect(fleetgate(...args), args.join(" ")).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(message),
      });
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});
