import { existsSync } from "node:fs";
import { join } from "node:path";

// The update lock, as an application takes it: the file exists while the lock is held.
export const LOCK_FILE = "updates.lock";

export class UpdatesLockedError extends Error {
  constructor(appId: number, service: string) {
    // The real supervisor's wording, which clients match on.
    super(`Lockfile exists for { appId: ${appId}, service: ${service} }`);
    this.name = "UpdatesLockedError";
  }
}

export function isLocked(dataDir: string): boolean {
  return existsSync(join(dataDir, LOCK_FILE));
}
