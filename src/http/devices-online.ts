import { adminPermissions } from "../auth/permissions.ts";
import { readCount } from "../core/read.ts";
import type { Database } from "../db/database.ts";
import { newUnitOfWork, withUnitOfWork } from "../db/unit-of-work.ts";
import type { Model } from "../model/types.ts";

// How old a count may be before a scrape asks again, and how long a scrape waits for a new one.
// The count is a sequential scan of `device`: measured 0.21–0.37 s for 10^6 devices (340 MB), and
// 60–90 ms for 10^5, on a busy 2-core machine. A partial index on is_online measured 55 ms just after a
// VACUUM but 0.56–1.0 s once heartbeats had rewritten a fifth of the rows (the index-only scan
// then reads the table row by row), so there is none. One count per 30 s keeps it near 1% of one
// backend at 10^6 devices, and the offline sweep marks devices only every 30 s by default anyway.
export const DEVICES_ONLINE_PERIOD_MS = 30_000;
const WAIT_MS = 1_000;

/**
 * The number of online devices, for the `fleetgate_devices_online` gauge: counted at most once per
 * period, through the planner (a system count over every fleet), and never holding a scrape
 * longer than a second: a scrape while the database is slow or away gets the last count.
 */
export class DevicesOnline {
  private count: number | undefined;
  private countedAt = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly model: Model,
    private readonly periodMs = DEVICES_ONLINE_PERIOD_MS,
  ) {}

  /** The latest count, refreshed first when it is older than the period; undefined before the first. */
  async current(now = Date.now()): Promise<number | undefined> {
    if (now - this.countedAt >= this.periodMs) {
      // The server's own work, shared by the scrapes meanwhile: not one scrape's unit of work, so a
      // scraper that goes away does not cancel it.
      this.running ??= withUnitOfWork(newUnitOfWork(), () => this.refresh(now)).finally(() => {
        this.running = undefined;
      });
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, WAIT_MS);
      });
      await Promise.race([this.running, waited]);
      clearTimeout(timer);
    }
    return this.count;
  }

  private async refresh(now: number): Promise<void> {
    try {
      this.count = await readCount(
        {
          resource: "device",
          count: true,
          options: {
            filter: {
              kind: "comparison",
              op: "eq",
              left: { kind: "path", segments: ["is_online"] },
              right: { kind: "boolean", value: true },
            },
          },
        },
        { db: this.db, model: this.model, permissions: adminPermissions, format: "v4" },
      );
      this.countedAt = now;
    } catch {
      // The database is away: the last count stands, and the next scrape asks again.
    }
  }
}
