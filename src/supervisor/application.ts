import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { takeLock } from "./lock.ts";
import { sleep, type Timings } from "./timings.ts";

// The one application a device runs, simulated: no containers, only the states and
// timings a supervisor client can observe. Actions run one at a time, as the real
// supervisor serialises them, and those that would kill the application respect the
// update lock unless forced.

export type AppPhase = "Stopping" | "Starting" | "Installing";

export interface ApplicationOptions {
  readonly appId: number;
  /** Services in the release; the v1 app endpoints refuse more than one, and need one. */
  readonly services: number;
  readonly dataDir: string;
  readonly timings: Timings;
  readonly signal: AbortSignal;
  /** The supervisor API key at this moment; the application reads it when it starts. */
  readonly currentApiKey: () => string;
  readonly onChange: () => void;
  /** The application (re)started with the current key. */
  readonly onStarted: () => void;
  /** The container the last run left, so a supervisor restart keeps it. */
  readonly containerId?: string;
  readonly createdAt?: string;
  /** A new container was created: the device keeps its id across restarts. */
  readonly onNewContainer: (containerId: string, createdAt: string) => void;
}

// The service name the lock message names; a single-container release calls it main.
export const MAIN_SERVICE = "main";

const newContainerId = () => randomBytes(32).toString("hex");

export class Application {
  readonly appId: number;
  readonly services: number;
  /** A stop is temporary: only this process remembers it. */
  running = true;
  containerId: string;
  /** When the container was created, as the engine reports it (/v2/state/status). */
  createdAt: string;
  phase: AppPhase | null = null;
  /** The key in the application's environment: the one current when it last started. */
  heldApiKey: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ApplicationOptions) {
    this.appId = options.appId;
    this.services = options.services;
    this.heldApiKey = options.currentApiKey();
    // A supervisor restart leaves the engine's containers as they are: the id stays.
    this.containerId = options.containerId ?? newContainerId();
    this.createdAt = options.createdAt ?? new Date().toISOString();
    if (options.containerId === undefined) options.onNewContainer(this.containerId, this.createdAt);
    mkdirSync(this.dataFolder, { recursive: true });
  }

  /** What /v1/purge clears: the application's persistent data. */
  get dataFolder(): string {
    return join(this.options.dataDir, "apps", String(this.appId), "data");
  }

  stop(force: boolean): Promise<void> {
    return this.serial(async () => {
      this.assertUnlocked(force);
      if (!this.running) return;
      await this.step("Stopping");
      this.running = false;
      this.settle();
    });
  }

  start(): Promise<void> {
    return this.serial(async () => {
      if (this.running) return;
      await this.step("Starting");
      this.started(false);
    });
  }

  /** The v2 start-service takes the update lock too (actions.ts executeServiceActionWithLock). */
  startLocked(force: boolean): Promise<void> {
    return this.serial(async () => {
      this.assertUnlocked(force);
      if (this.running) return;
      await this.step("Starting");
      this.started(false);
    });
  }

  restart(force: boolean): Promise<void> {
    return this.serial(async () => {
      this.assertUnlocked(force);
      await this.step("Stopping");
      await this.step("Starting");
      this.started(true);
    });
  }

  purge(force: boolean): Promise<void> {
    return this.serial(async () => {
      this.assertUnlocked(force);
      await this.step("Stopping");
      rmSync(this.dataFolder, { recursive: true, force: true });
      mkdirSync(this.dataFolder, { recursive: true });
      await this.step("Starting");
      this.started(true);
    });
  }

  /** Replaces the running release; the caller has already checked the lock. */
  install(commit: () => void): Promise<void> {
    return this.serial(async () => {
      await this.step("Installing", this.options.timings.installMs);
      commit();
      this.started(true);
    });
  }

  /** After a reboot every application runs again, stopped or not. */
  boot(): Promise<void> {
    return this.serial(async () => {
      await this.step("Starting");
      this.started(false);
    });
  }

  private assertUnlocked(force: boolean): void {
    takeLock(this.options.dataDir, force, this.appId, MAIN_SERVICE);
  }

  private async step(phase: AppPhase, ms = this.options.timings.stepMs): Promise<void> {
    this.phase = phase;
    this.options.onChange();
    await sleep(ms, this.options.signal);
  }

  private started(newContainer: boolean): void {
    if (newContainer) {
      this.containerId = newContainerId();
      this.createdAt = new Date().toISOString();
      this.options.onNewContainer(this.containerId, this.createdAt);
    }
    this.running = true;
    this.heldApiKey = this.options.currentApiKey();
    this.options.onStarted();
    this.settle();
  }

  private settle(): void {
    this.phase = null;
    this.options.onChange();
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => {});
    return result;
  }
}
