import type { Device } from "./device.ts";
import { isAbort, sleep } from "./timings.ts";

// Learns the device's target release: on a timer, and at once on /v1/update. Where the
// target comes from (the cloud, or a local file when unmanaged) is the source's business: the cloud's
// is a conditional GET (cloud/cloud-client.ts), whose 304 answers the target it last read.

/** The commit the device should run; null when its fleet has no release. */
export type TargetSource = () => Promise<string | null>;

export interface TargetPollerOptions {
  readonly source: TargetSource;
  readonly device: Device;
  readonly intervalMs: number;
  readonly signal: AbortSignal;
  readonly log: (message: string) => void;
}

export class TargetPoller {
  private lastSuccess = Date.now();
  private inFlight: Promise<void> | null = null;
  private again: boolean | null = null;

  constructor(private readonly options: TargetPollerOptions) {}

  start(): void {
    const { intervalMs, signal } = this.options;
    const loop = async () => {
      for (;;) {
        this.poll(false);
        await sleep(intervalMs, signal);
      }
    };
    loop().catch((error) => {
      if (!isAbort(error)) this.options.log(`target polling stopped: ${(error as Error).message}`);
    });
  }

  /** Resolves once the poll under way (the first one, right after start) has ended, well or not. */
  settled(): Promise<void> {
    return this.inFlight ?? Promise.resolve();
  }

  /** Polls now; a poll asked for while one runs follows it, so a forced check is never lost. */
  poll(force: boolean): void {
    if (this.inFlight) {
      this.again = (this.again ?? false) || force;
      return;
    }
    this.inFlight = this.fetch(force).finally(() => {
      this.inFlight = null;
      const next = this.again;
      this.again = null;
      if (next !== null && !this.options.signal.aborted) this.poll(next);
    });
  }

  /** Unhealthy once three polls in a row have failed to reach the target. */
  healthy(): boolean {
    return Date.now() - this.lastSuccess < 3 * this.options.intervalMs + 1000;
  }

  private async fetch(force: boolean): Promise<void> {
    try {
      const commit = await this.options.source();
      this.lastSuccess = Date.now();
      this.options.device.setTarget(commit, force);
    } catch (error) {
      this.options.log(`target poll failed: ${(error as Error).message}`);
    }
  }
}
