import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

// PGlite's initdb grows the WebAssembly memory of the process that runs it to about 700 MiB, and a
// WebAssembly memory never shrinks: a server that created its own data directory kept 540 to 875
// MiB for its whole life, against about 150 MiB for one that opened an existing directory. So a
// new directory is made by a short-lived child process, whose memory goes back to the system when
// it exits, and the server then opens it as it opens any other.

/** Whether `dataDir` holds no database yet (PostgreSQL writes PG_VERSION first of all). */
export function isNewDataDir(dataDir: string): boolean {
  return !existsSync(join(dataDir, "PG_VERSION"));
}

/** Runs PGlite's initdb for `dataDir` in a child process of the same Node.js. */
export async function createDataDir(dataDir: string): Promise<void> {
  const pglite = import.meta.resolve("@electric-sql/pglite");
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)});
    const db = await PGlite.create(${JSON.stringify(dataDir)});
    await db.close();`;
  await promisify(execFile)(process.execPath, ["--input-type=module", "--eval", script], {
    // Only what Node needs: the parent's options (a debugger, a loader) are not the child's.
    env: { PATH: process.env.PATH ?? "" },
    maxBuffer: 1024 * 1024,
  });
}
