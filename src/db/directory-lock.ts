import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
  const file = join(dir, "fleetgate.lock");
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(file, "utf8"));
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new Error(`The data directory ${dir} is in use by process ${holder}`);
      }
      rmSync(file, { force: true });
    }
  }
}
