import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { type Block, type Command, section, shellBlocks } from "../support/docs/readme-blocks.ts";
import { compare, type Outcome } from "../support/docs/readme-shown.ts";
import { type RunningServer, startServer } from "../support/processes.ts";

// Issue 47: the README runs. Every shell example of its Quick start, OData, GraphQL and proxy
// sections runs as written, with bash and curl, in the order a reader meets them, in one terminal
// session (a variable set by one command, such as the Quick start's TOKEN, is there for the next),
// against a server started as `npm start` starts it on a fresh database, in a directory of its own
// laid out as the project is (`npm run seed` and `npx fleetgate` work there, and `./data` is new).
// Only the README's address, http://127.0.0.1:3000 (and `$API`, "the server"), is replaced by the
// server's. What each command prints is compared with what the README shows (readme.ts, shown.ts).
// The proxy section runs on the devices of the fleet simulator, started by its own README block,
// which keeps running, as in another terminal, until the end.

const root = fileURLToPath(new URL("../../", import.meta.url));
const readmeUrl = "http://127.0.0.1:3000";

/** The sections, in the order they run; the fleet simulator's block starts the proxy's devices. */
const sections = [
  "## Quick start",
  "## The OData API",
  "### The fleet simulator",
  "## The cloud proxy",
  "## GraphQL",
];

/** A command that prints its shown output and keeps running (a stream, the simulator) runs on. */
const RUNS_ON_AFTER_MS = 3_000;
const COMMAND_TIMEOUT_MS = 120_000;

function readmeBlocks(): Block[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  return sections.flatMap((heading) => shellBlocks(heading, section(readme, heading)));
}

/** A copy of the project's layout: links to its files, with no `data` and no `.env` of its own. */
function projectDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-readme-"));
  for (const name of readdirSync(root)) {
    if (name === "data" || name === ".env" || name === ".git") continue;
    symlinkSync(join(root, name), join(dir, name));
  }
  return dir;
}

/** A bash session: each command runs in its own bash, with the variables the earlier ones set. */
class Session {
  private readonly state: string;
  readonly running: ChildProcess[] = [];

  constructor(
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly url: string,
  ) {
    this.state = join(cwd, ".readme-session");
  }

  /**
   * Runs `command` until it exits, or until it shows its output and keeps running. A stream (shown
   * output that begins with an SSE comment line, `:`) is answered once it has begun: `later` then
   * says whether it showed what the README shows while the block's next commands ran.
   */
  run(command: Command): Promise<{ problem: string | undefined; later?: Promise<string | undefined> }> {
    const text = command.text.replaceAll(readmeUrl, this.url);
    // `set -a` exports what the command assigns; the EXIT trap keeps it for the next command. The
    // curl function only adds each transfer's status, on stderr: what it prints is unchanged.
    const script = [
      "set -a -o pipefail",
      `[ -f "${this.state}" ] && . "${this.state}"`,
      `trap 'export -p | grep -Ev "^declare -x (PWD|OLDPWD|SHLVL|_)=" > "${this.state}"' EXIT`,
      `curl() { command curl -w '%{stderr}\\n@status %{http_code}\\n' "$@"; }`,
      text,
    ].join("\n");
    const child = spawn("bash", ["-c", script], {
      cwd: this.cwd,
      env: { ...this.env, API: this.url },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const transcript = (text: string) => {
      // README_EXAMPLES_LOG=<file> keeps what each command printed, to read when one fails.
      if (process.env.README_EXAMPLES_LOG) appendFileSync(process.env.README_EXAMPLES_LOG, text);
    };
    const outcome = (exitCode: number | null): Outcome => ({
      stdout: command.text.startsWith("npm run ") ? withoutNpmBanner(stdout) : stdout,
      statuses: [...stderr.matchAll(/^@status (\d+)$/gm)].map((m) => Number(m[1])),
      exitCode,
    });
    return new Promise((resolve) => {
      let settled = false;
      let runsOn: NodeJS.Timeout | undefined;
      const stream = command.shown[0] === ":";
      let streamed: ((problem: string | undefined) => void) | undefined;
      const later = new Promise<string | undefined>((resolve) => {
        streamed = resolve;
      });
      const finish = (exitCode: number | null, problem?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(runsOn);
        const result = outcome(exitCode);
        transcript(
          `$ ${command.text}\n${result.stdout}\n[${result.statuses.join(", ")}] exit ${exitCode}\n\n`,
        );
        if (exitCode === null) this.running.push(child);
        resolve({
          problem:
            problem ??
            compare(command, result)?.concat(
              `\n(stderr: ${stderr.replace(/^@status.*\n/gm, "").slice(-2000)})`,
            ),
        });
      };
      const timer = setTimeout(() => {
        const problem = `still running after ${COMMAND_TIMEOUT_MS} ms without printing what the README shows: ${compare(command, outcome(null))}\n(stderr: ${stderr.slice(-2000)})`;
        if (settled) streamed?.(problem);
        else finish(null, problem);
      }, COMMAND_TIMEOUT_MS);
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        if (stream) {
          if (!settled) {
            settled = true;
            this.running.push(child);
            resolve({ problem: undefined, later });
          }
          if (compare(command, outcome(null)) === undefined) {
            transcript(`$ ${command.text} (streaming)\n${stdout}\n\n`);
            clearTimeout(timer);
            streamed?.(undefined);
          }
          return;
        }
        // A command still running once it printed its shown output runs on in the background.
        if (command.shown.length > 0 && !runsOn && compare(command, outcome(null)) === undefined)
          runsOn = setTimeout(() => finish(null), RUNS_ON_AFTER_MS);
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.once("exit", (code, signal) => {
        if (stream && settled) {
          clearTimeout(timer);
          streamed?.(compare(command, outcome(code ?? 128)));
        }
        finish(code ?? (signal ? 128 : 1));
      });
    });
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.running.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        const group = -(child.pid ?? 0);
        process.kill(group, "SIGTERM");
        const timer = setTimeout(() => process.kill(group, "SIGKILL"), 15_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

/** npm prints `> name@version script` and the script's command before what the script prints. */
function withoutNpmBanner(stdout: string): string {
  return stdout.replace(/^(\s*\n)*(> .*\n)+\s*\n?/, "");
}

describe.each(databaseKinds)("the README's examples on %s", { timeout: 600_000 }, (kind) => {
  const dir = projectDirectory();
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(npm_|DATA_DIR$|DATABASE_URL$|ADMIN_PASSWORD$|PORT$|HOST$)/i.test(name),
    ),
  );
  let database: TestDatabase | undefined;
  let server: RunningServer | undefined;
  let session: Session | undefined;

  beforeAll(async () => {
    if (kind === "postgres") {
      database = await freshDatabase(kind, { empty: true });
      env.DATABASE_URL = database.url;
    }
    // As `npm start` starts it (the first of the README's blocks, which the test does not run).
    server = await startServer(
      { ...(env as Record<string, string>), PROXY_TIMEOUT_MS: "10000" },
      { cwd: dir },
    );
    session = new Session(dir, { ...env, npm_config_update_notifier: "false" }, server.url);
  }, 120_000);

  afterAll(async () => {
    await session?.stop();
    await server?.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("runs every shell example of the sections as written, and each prints what the README shows", async () => {
    const blocks = readmeBlocks();
    const notRun = blocks.filter((block) => block.notRun);
    // Exceptions are few, and each says why.
    expect(notRun.map((block) => `${block.section}: ${block.notRun}`)).toEqual([
      "## Quick start: installs and starts the server, which the test starts itself",
    ]);
    const problems: string[] = [];
    let ran = 0;
    for (const block of blocks.filter((b) => !b.notRun)) {
      const streams: { command: Command; later: Promise<string | undefined> }[] = [];
      for (const command of block.commands) {
        const result = await (session as Session).run(command);
        ran++;
        if (result.problem)
          problems.push(`README line ${command.line}: ${command.text}\n  ${result.problem}`);
        if (result.later) streams.push({ command, later: result.later });
      }
      for (const { command, later } of streams) {
        const problem = await later;
        if (problem) problems.push(`README line ${command.line}: ${command.text}\n  ${problem}`);
      }
    }
    expect(problems.join("\n\n")).toBe("");
    expect(ran).toBeGreaterThan(15);
    process.stdout.write(`README examples on ${kind}: ${ran} commands ran\n`);
  });
});
