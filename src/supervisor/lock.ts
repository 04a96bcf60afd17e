import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";

// The update lock, as an application takes it: the file exists while the lock is held.
export const LOCK_FILE = "updates.lock";
// The legacy name (resin-updates.lock), which the real supervisor still honours beside the new one.
export const LEGACY_LOCK_FILE = "resin-updates.lock";
const LOCK_FILES = [LOCK_FILE, LEGACY_LOCK_FILE] as const;

export class UpdatesLockedError extends Error {
  constructor(appId: number, service: string) {
    // The real supervisor's wording, which clients match on.
    super(`Lockfile exists for { appId: ${appId}, service: ${service} }`);
    this.name = "UpdatesLockedError";
  }
}

export function isLocked(dataDir: string): boolean {
  return LOCK_FILES.some((file) => existsSync(join(dataDir, file)));
}

/**
 * Checks the lock before an action that would kill the application. A forced action takes the
 * lock away from the application, as the real supervisor's update-lock does with `force`: it
 * deletes the lock files, so later unforced actions find no lock.
 */
export function takeLock(dataDir: string, force: boolean, appId: number, service: string): void {
  if (force) {
    for (const file of LOCK_FILES) rmSync(join(dataDir, file), { force: true });
  } else if (isLocked(dataDir)) {
    throw new UpdatesLockedError(appId, service);
  }
}
