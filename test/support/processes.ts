import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));

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
export function startServer(env: Record<string, string>): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, "serve"], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout}\n${stderr}`)), 30_000);
    const exitedEarly = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout}\n${stderr}`));
    };
    child.once("exit", exitedEarly);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (listening?.[1]) {
        clearTimeout(timer);
        child.off("exit", exitedEarly);
        resolve({
          url: listening[1],
          child,
          stderr: () => stderr,
          stdout: () => stdout,
          stop: () => {
            child.kill("SIGTERM");
            return exited;
          },
        });
      }
    });
  });
}
