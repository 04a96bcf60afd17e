import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { spawnFleetgate } from "../processes.ts";

// Real `fleetgate supervisor` processes for the conformance suite, and a small client.

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
export async function spawnSupervisor(
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): Promise<SupervisorProcess> {
  const { child, ready, exited, stderr } = await spawnFleetgate(
    ["supervisor", "--data-dir", dataDir, ...args],
    {
      what: "supervisor",
      timeoutMs: 20_000,
      env: { ...process.env, ...env },
      ready: (out) =>
        out.includes("\n")
          ? (JSON.parse(out.split("\n")[0] as string) as { uuid: string; port: number; apiKey: string })
          : undefined,
    },
  );
  return {
    ...ready,
    url: `http://127.0.0.1:${ready.port}`,
    dataDir,
    child,
    exited,
    stderr,
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** An unmanaged device on a free port with the fast timings. */
export function unmanaged(dataDir: string, ...args: string[]): Promise<SupervisorProcess> {
  return spawnSupervisor(["--unmanaged", "--api-key", KEY, "--port", "0", ...FAST, ...args], dataDir);
}

/**
 * One unmanaged device for the enclosing describe block, in a data directory of its own: started
 * before the block's tests, stopped and its directory removed after them. `device` (and so a
 * `client(device)`) stands for the process `start` started last, so a test may stop the device and
 * start it again on the same directory.
 */
export function unmanagedDevice(...args: string[]) {
  const dir = tempDir();
  let running: SupervisorProcess | undefined;
  const current = (): SupervisorProcess => {
    if (!running) throw new Error("the device has not started");
    return running;
  };
  const start = async () => {
    running = await unmanaged(dir, ...args);
  };
  beforeAll(start);
  afterAll(async () => {
    await running?.stop();
    removeDir(dir);
  });
  const device: SupervisorProcess = {
    get url() {
      return current().url;
    },
    get port() {
      return current().port;
    },
    get uuid() {
      return current().uuid;
    },
    get apiKey() {
      return current().apiKey;
    },
    get dataDir() {
      return current().dataDir;
    },
    get child() {
      return current().child;
    },
    get exited() {
      return current().exited;
    },
    stderr: () => current().stderr(),
    stop: () => current().stop(),
  };
  return { dir, device, call: client(device), start };
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
