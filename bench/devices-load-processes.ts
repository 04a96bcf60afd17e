import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import {
  type DeviceApi,
  type DeviceLoad,
  type PhaseStats,
  type Rates,
  type RawPhase,
  summarise,
} from "./devices-load.ts";
import type { Seeded } from "./devices-seed.ts";
import { repoRoot } from "./paths.ts";

// The simulated devices split over several load processes (bench/devices-load-child.ts), for when
// one process cannot send the rate: each drives every `of`-th device (its own ETags), at its share
// of the rate, and sends back its counts and latencies, merged here into one phase.

/** What the parent asks of a load process. */
export type LoadRequest =
  | {
      readonly op: "init";
      readonly seeded: Seeded;
      readonly connections: number;
      readonly changeEvery: number;
      readonly index: number;
      readonly of: number;
    }
  | {
      readonly op: "prime";
      readonly bases: readonly string[];
      readonly api: DeviceApi;
      readonly concurrency: number;
      readonly count?: number;
    }
  | {
      readonly op: "run";
      readonly bases: readonly string[];
      readonly api: DeviceApi;
      readonly rates: Rates;
      readonly seconds: number;
    };

/** A load process's answer to its last request. */
export type LoadReply =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: string };

class LoadProcess {
  private waiting: ((reply: LoadReply) => void) | undefined;
  private readonly exited: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.on("message", (reply: LoadReply) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.(reply);
    });
    child.once("exit", (code) => this.waiting?.({ ok: false, error: `load process exited with ${code}` }));
  }

  async ask<T>(request: LoadRequest): Promise<T> {
    const reply = await new Promise<LoadReply>((resolve) => {
      this.waiting = resolve;
      this.child.send(request);
    });
    if (!reply.ok) throw new Error(reply.error);
    return reply.result as T;
  }

  stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    return this.exited;
  }
}

export class LoadProcesses implements DeviceLoad {
  private constructor(private readonly processes: readonly LoadProcess[]) {}

  static async start(seeded: Seeded, connections: number, changeEvery: number, count: number) {
    const processes = Array.from(
      { length: count },
      () =>
        new LoadProcess(
          spawn(process.execPath, ["--import", "tsx", join(repoRoot, "bench/devices-load-child.ts")], {
            cwd: repoRoot,
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          }),
        ),
    );
    const load = new LoadProcesses(processes);
    try {
      await Promise.all(
        processes.map((child, index) =>
          child.ask({
            op: "init",
            seeded,
            connections: Math.ceil(connections / count),
            changeEvery,
            index,
            of: count,
          }),
        ),
      );
    } catch (error) {
      await load.close();
      throw error;
    }
    return load;
  }

  async prime(bases: readonly string[], api: DeviceApi, concurrency: number, count?: number) {
    const started = performance.now();
    const each = Math.max(1, Math.ceil(concurrency / this.processes.length));
    // Each process sends its share of a phase's polls to devices of its own: its share of `count`.
    const share = count === undefined ? undefined : Math.ceil(count / this.processes.length);
    const answers = await Promise.all(
      this.processes.map((child) =>
        child.ask<{ failed: string[] }>({ op: "prime", bases, api, concurrency: each, count: share }),
      ),
    );
    return { ms: performance.now() - started, failed: answers.flatMap((answer) => answer.failed) };
  }

  async run(bases: readonly string[], api: DeviceApi, rates: Rates, seconds: number): Promise<PhaseStats> {
    const share = { poll: rates.poll / this.processes.length, report: rates.report / this.processes.length };
    const raws = await Promise.all(
      this.processes.map((child) => child.ask<RawPhase>({ op: "run", bases, api, rates: share, seconds })),
    );
    return summarise(raws, seconds);
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.map((child) => child.stop()));
  }
}
