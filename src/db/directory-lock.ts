import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

// Directories this process holds: a lock file with our own pid that is not in here was left by an
// earlier process that had the same pid (a container's pid 1, say) and is stale.
const held = new Set<string>();

/** The directory is locked by another live process: the CLI then asks that process (a running server) instead. */
export class DirectoryInUse extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`The data directory ${dir} is in use by process ${pid}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Claims `dir` for this process. PGlite does not stop a second process from opening the same
 * directory, and the two then silently lose each other's writes. A lock left by a dead process is taken over.
 */
export function lockDirectory(dir: string): () => void {
  const path = resolve(dir);
  const file = join(path, "fleetgate.lock");
  if (held.has(path)) throw new DirectoryInUse(dir, process.pid);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      held.add(path);
      return () => {
        held.delete(path);
        rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(file, "utf8"));
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DirectoryInUse(dir, holder);
      }
      rmSync(file, { force: true });
    }
  }
}
