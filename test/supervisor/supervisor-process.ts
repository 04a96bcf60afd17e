import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Real `fleetgate supervisor` processes for the conformance suite, and a small client.

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));

export const KEY = "conformanceKey123";

/** Timings short enough for tests and long enough to observe each phase over HTTP. */
export const FAST = ["--download-ms", "300", "--install-ms", "60", "--step-ms", "60", "--blink-ms", "400"];

export interface SupervisorProcess {
  readonly url: string;
  readonly port: number;
  readonly uuid: string;
  readonly apiKey: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export const tempDir = () => mkdtempSync(join(tmpdir(), "fleetgate-supervisor-"));
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

/** Starts `fleetgate supervisor <args>` and resolves with the JSON line it prints once it listens. */
export function spawnSupervisor(
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): Promise<SupervisorProcess> {
  const child = spawn(process.execPath, [bin, "supervisor", "--data-dir", dataDir, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`supervisor did not start:\n${stdout}\n${stderr}`)),
      20_000,
    );
    const exitedEarly = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`supervisor exited with ${code}:\n${stdout}\n${stderr}`));
    };
    child.once("exit", exitedEarly);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      if (!stdout.includes("\n")) return;
      clearTimeout(timer);
      child.off("exit", exitedEarly);
      const line = JSON.parse(stdout.split("\n")[0] as string) as {
        uuid: string;
        port: number;
        apiKey: string;
      };
      resolve({
        ...line,
        url: `http://127.0.0.1:${line.port}`,
        dataDir,
        child,
        exited,
        stderr: () => stderr,
        stop: () => {
          if (child.exitCode === null) child.kill("SIGTERM");
          return exited;
        },
      });
    });
  });
}

/** An unmanaged device on a free port with the fast timings. */
export function unmanaged(dataDir: string, ...args: string[]): Promise<SupervisorProcess> {
  return spawnSupervisor(["--unmanaged", "--api-key", KEY, "--port", "0", ...FAST, ...args], dataDir);
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly type: string;
  readonly json: () => unknown;
}

export interface CallOptions {
  readonly body?: unknown;
  /** The key sent as ?apikey=; null sends none. Defaults to the device's key. */
  readonly key?: string | null;
  readonly headers?: Record<string, string>;
}

export function client(device: { url: string; apiKey: string }) {
  return async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    const key = options.key === undefined ? device.apiKey : options.key;
    const url = new URL(path, device.url);
    if (key !== null) url.searchParams.set("apikey", key);
    const body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    const response = await fetch(url, {
      method,
      headers: {
        ...(options.body !== undefined && { "content-type": "application/json" }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : body,
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      type: response.headers.get("content-type") ?? "",
      json: () => JSON.parse(text),
    };
  };
}

/** Polls `read` until `done` holds; returns every value seen, in order. */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T[]> {
  const seen: T[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    seen.push(value);
    if (done(value)) return seen;
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
