import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

// PGlite's initdb grows the WebAssembly memory of the process that runs it to about 700 MiB, and a
// WebAssembly memory never shrinks: a server that created its own data directory kept 540 to 875
// MiB for its whole life, against about 150 MiB for one that opened an existing directory. So
// initdb runs in a short-lived child process, whose memory goes back to the system when it exits.
// And it runs once per installed PGlite, not once per data directory: its result is kept as a
// template (made at install, or by the first start that needs it), and a new data directory is a
// copy of it, which the server then migrates. On a 2-core machine (2026-11-27) initdb took 2.6 s of
// a 7 s first start, the copy 0.13 s. The migrations stay in the server: a template migrated in a
// child process as well saved another second, but the server then held 456-489 MiB under the demo
// reads (bench W9, three runs) instead of 370.

const pglite = import.meta.resolve("@electric-sql/pglite");
const templates = fileURLToPath(new URL("../../node_modules/.cache/fleetgate-embedded/", import.meta.url));

/** Whether `dataDir` holds no database yet (PostgreSQL writes PG_VERSION first of all). */
export function isNewDataDir(dataDir: string): boolean {
  return !existsSync(join(dataDir, "PG_VERSION"));
}

/** Runs PGlite's initdb for `dataDir` in a child process of the same Node.js. */
async function initdb(dataDir: string): Promise<void> {
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)});
    const db = await PGlite.create(${JSON.stringify(dataDir)});
    await db.close();`;
  await promisify(execFile)(process.execPath, ["--input-type=module", "--eval", script], {
    // Only what Node needs: the parent's options (a debugger, a loader) are not the child's.
    env: { PATH: process.env.PATH ?? "" },
    maxBuffer: 1024 * 1024,
  });
}

/** The installed PGlite's new, empty data directory: made when missing, then kept. */
export async function embeddedTemplate(): Promise<string> {
  const { version } = JSON.parse(readFileSync(new URL("../package.json", pglite), "utf8")) as {
    version: string;
  };
  const template = join(templates, `pglite-${version}`);
  if (!isNewDataDir(template)) return template;
  // Made beside its place and renamed into it: a process that finds the template finds it whole,
  // and of two processes making it at once, the second's rename fails and its copy is dropped.
  const making = `${template}.${process.pid}-${randomBytes(4).toString("hex")}`;
  mkdirSync(making, { recursive: true });
  try {
    await initdb(making);
    renameSync(making, template);
  } catch (error) {
    if (isNewDataDir(template)) throw error;
  } finally {
    rmSync(making, { recursive: true, force: true });
  }
  return template;
}

/** Copies the files under `from` into `to`, but `skip`. */
function copyTree(from: string, to: string, skip: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (source === skip) continue;
    if (entry.isDirectory()) copyTree(source, join(to, entry.name), skip);
    else copyFileSync(source, join(to, entry.name));
  }
}

/**
 * Makes `dataDir` (new, or holding only fleetgate's lock) a new database: a copy of the template,
 * PG_VERSION last, so a copy cut short is not taken for a database. Where the template cannot be
 * kept (node_modules not writable), initdb makes the directory itself.
 * Copied file by file: fs.cpSync took 0.9 s for the template's 1,200 files, this 0.13 s.
 */
export async function createDataDir(dataDir: string): Promise<void> {
  let template: string;
  try {
    template = await embeddedTemplate();
  } catch {
    await initdb(dataDir);
    return;
  }
  const version = join(template, "PG_VERSION");
  copyTree(template, dataDir, version);
  copyFileSync(version, join(dataDir, "PG_VERSION"));
}
