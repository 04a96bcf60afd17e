import type { Application } from "./application.ts";
import { isLocked } from "./lock.ts";
import { isAbort, sleep, type Timings } from "./timings.ts";

// The update cycle: when the target commit differs from the running one, download it
// (download_progress climbs in steps, then null), install it, and run it. The cycle
// waits while the update lock is held, unless the update was forced.

const DOWNLOAD_STEPS = 10;

export interface UpdaterOptions {
  readonly app: Application;
  readonly dataDir: string;
  readonly timings: Timings;
  readonly signal: AbortSignal;
  readonly currentCommit: () => string | null;
  readonly setCommit: (commit: string) => void;
  readonly onChange: () => void;
  readonly log: (message: string) => void;
}

export class Updater {
  target: string | null = null;
  downloading = false;
  downloadProgress: number | null = null;
  downloaded = false;
  failed = false;
  private force = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: UpdaterOptions) {}

  get pending(): boolean {
    return this.target !== null && this.target !== this.options.currentCommit();
  }

  /** A null target (a fleet without a release) leaves the running release alone. */
  setTarget(commit: string | null, force: boolean): void {
    if (commit !== null) this.target = commit;
    if (force) this.force = true;
    if (!this.pending) {
      this.force = false;
      return;
    }
    this.options.onChange();
    this.loop ??= this.run()
      .catch((error) => {
        if (isAbort(error)) return;
        this.failed = true;
        this.options.log(`update failed: ${(error as Error).message}`);
      })
      .finally(() => {
        this.loop = null;
        this.options.onChange();
      });
  }

  private async run(): Promise<void> {
    const { dataDir, timings, signal } = this.options;
    while (this.pending) {
      if (!this.force && isLocked(dataDir)) {
        // The application holds the lock: look again shortly, as the real one retries.
        await sleep(Math.max(timings.stepMs, 20), signal);
        continue;
      }
      await this.cycle(this.target as string);
    }
    this.force = false;
  }

  private async cycle(commit: string): Promise<void> {
    const { timings, signal, app } = this.options;
    this.failed = false;
    this.downloading = true;
    for (let step = 0; step < DOWNLOAD_STEPS; step++) {
      this.downloadProgress = Math.round((step * 100) / DOWNLOAD_STEPS);
      this.options.onChange();
      await sleep(timings.downloadMs / DOWNLOAD_STEPS, signal);
    }
    // Downloaded: progress goes back to null, as the real device reports it.
    this.downloading = false;
    this.downloadProgress = null;
    this.downloaded = true;
    await app.install(() => this.options.setCommit(commit));
    this.downloaded = false;
    this.options.onChange();
  }
}
