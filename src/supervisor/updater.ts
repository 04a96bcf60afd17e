import { type Application, MAIN_SERVICE } from "./application.ts";
import { isLocked, takeLock } from "./lock.ts";
import { isAbort, sleep, type Timings } from "./timings.ts";

// The update cycle: when the target commit differs from the running one, download it
// (download_progress climbs in steps, then null), install it, and run it. Installing
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
  private downloadedCommit: string | null = null;
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
    while (this.pending) await this.cycle(this.target as string);
    this.force = false;
  }

  // The real supervisor downloads a new release whatever the lock says ("updates will still be
  // downloaded ... ready to be applied once the lockfile no longer exists", docs/update-locking.md);
  // applying it is what the lock refuses: the device shows update_downloaded and update_failed
  // and retries until the lock goes. A forced update removes the lock, as its update-lock does.
  private async cycle(commit: string): Promise<void> {
    const { timings, signal, app, dataDir } = this.options;
    // A newer target than the one downloaded is downloaded again.
    if (this.downloadedCommit !== commit) await this.download(commit);
    if (!this.force && isLocked(dataDir)) {
      this.failed = true;
      this.options.onChange();
      await sleep(Math.max(timings.stepMs, 20), signal);
      return;
    }
    takeLock(dataDir, this.force, app.appId, MAIN_SERVICE);
    this.failed = false;
    await app.install(() => this.options.setCommit(commit));
    this.downloaded = false;
    this.downloadedCommit = null;
    this.options.onChange();
  }

  private async download(commit: string): Promise<void> {
    const { timings, signal } = this.options;
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
    this.downloadedCommit = commit;
    this.options.onChange();
  }
}
