import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const fleetgateBin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));

/** A `fleetgate` process that has said it is ready. */
export interface Spawned<T> {
  readonly child: ChildProcess;
  /** What `ready` found in its stdout. */
  readonly ready: T;
  readonly exited: Promise<number | null>;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
}

/**
 * Starts `fleetgate <args>` and resolves once `ready` finds what it waits for in the stdout so far;
 * rejects, with what the process printed, when it exits first or `timeoutMs` passes.
 */
export function spawnFleetgate<T>(
  args: readonly string[],
  options: {
    readonly what: string;
    readonly timeoutMs: number;
    readonly ready: (stdout: string) => T | undefined;
    readonly env?: NodeJS.ProcessEnv;
    /** The directory it runs in (where it looks for `.env`); the test's own by default. */
    readonly cwd?: string;
  },
): Promise<Spawned<T>> {
  const child = spawn(process.execPath, [fleetgateBin, ...args], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const printed = () => `${stdout}\n${stderr.slice(-4000)}`;
  return new Promise((resolve, reject) => {
    let started = false;
    const timer = setTimeout(
      () => reject(new Error(`${options.what} did not start:\n${printed()}`)),
      options.timeoutMs,
    );
    const exitedEarly = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${options.what} exited with ${code}:\n${printed()}`));
    };
    child.once("exit", exitedEarly);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      if (started) return;
      const ready = options.ready(stdout);
      if (ready === undefined) return;
      started = true;
      clearTimeout(timer);
      child.off("exit", exitedEarly);
      resolve({ child, ready, exited, stdout: () => stdout, stderr: () => stderr });
    });
  });
}

export interface RunningServer {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Everything written to stdout (the JSON log) so far. */
  stdout(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `fleetgate serve` on a free loopback port and resolves once it listens. */
export async function startServer(
  env: Record<string, string>,
  options: { readonly cwd?: string } = {},
): Promise<RunningServer> {
  const { child, ready, exited, stdout, stderr } = await spawnFleetgate(["serve"], {
    what: "server",
    timeoutMs: 30_000,
    cwd: options.cwd,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    ready: (out) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
  });
  return {
    url: ready,
    child,
    stderr,
    stdout,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
