import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { bin, repoRoot } from "./paths.ts";

export interface Child {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** From spawn to the first 200 on /ping, in ms. */
  readonly startMs: number;
  /** The last of what it wrote to stderr, for error messages. */
  stderr(): string;
  stop(): Promise<void>;
}

/** A port the kernel just handed out; the child binds it right after, so a clash is unlikely. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `GET <url>/ping` until it answers 200; resolves with the time it took from `since`. */
export async function waitForPing(url: string, since: number, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = since + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before answering /ping`);
    try {
      const response = await fetch(`${url}/ping`);
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${url}/ping did not answer in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface SpawnOptions {
  /** The Node binary (default: the one running the bench); a peer brings its own. */
  readonly command?: string;
  readonly cwd?: string;
}

/** Starts `args` (a node entry point and its arguments) on a free port and waits for /ping. */
export async function startChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): Promise<Child> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  const child = spawn(options.command ?? process.execPath, args, {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let startMs: number;
  try {
    startMs = await waitForPing(url, spawned, child);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${args.join(" ")}: ${(error as Error).message}\n${stderr}`);
  }
  return {
    name,
    url,
    process: child,
    pid: child.pid as number,
    startMs,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** How `npx fleetgate` starts Node: the environment and flags of bin/fleetgate.js's `env -S` line. */
export function binLaunch(): { readonly env: Record<string, string>; readonly flags: string[] } {
  const shebang = readFileSync(bin, "utf8").split("\n", 1)[0] ?? "";
  const words = /^#!\/usr\/bin\/env -S (.*)$/.exec(shebang)?.[1]?.trim().split(/\s+/) ?? ["node"];
  const node = words.indexOf("node");
  const assignments = words.slice(0, node).map((word) => word.split("=", 2) as [string, string]);
  return { env: Object.fromEntries(assignments), flags: words.slice(node + 1) };
}

/** `fleetgate serve` as `npx fleetgate serve` and `npm start` run it, a process of its own so its CPU time and memory are its own. */
export function startFleetgate(env: Record<string, string>): Promise<Child> {
  const launch = binLaunch();
  return startChild("fleetgate", [...launch.flags, bin, "serve"], { ...launch.env, ...env });
}

// utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks; Linux reports
// USER_HZ = 100 to user space on every architecture we run on.
const TICK_US = 10_000;

/** CPU time (user + system) the process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** Resident memory of the process (VmRSS), in bytes. */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) * 1024;
}
