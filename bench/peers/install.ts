import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { repoRoot } from "../paths.ts";

const run = promisify(execFile);

// A peer's package folder (bench/peers/<name>/: package.json, package-lock.json, its server) is
// installed into a copy under node_modules/.cache, not in place: its node_modules would otherwise
// sit under bench/, where the linters and test/boundaries.test.ts read every .ts file.
const cacheRoot = join(repoRoot, "node_modules", ".cache", "fleetgate-bench", "peers");
const STAMP = ".fleetgate-bench-lock";

export interface InstalledPeer {
  /** The installed copy: run the peer's server from here. */
  readonly dir: string;
  /** The Node binary the peer depends on (the `node` package of the npm registry). */
  readonly node: string;
  /** Installed in this run (false: the cached install matched the lockfile). */
  readonly installed: boolean;
}

/** `npm ci` of bench/peers/<name> into the cache, unless the cached install has the same lockfile. */
export async function installPeer(name: string): Promise<InstalledPeer> {
  const source = fileURLToPath(new URL(`./${name}/`, import.meta.url));
  const dir = join(cacheRoot, name);
  mkdirSync(dir, { recursive: true });
  const files = readdirSync(source).filter((file) => file !== "node_modules");
  const stamp = createHash("sha256")
    .update(readFileSync(join(source, "package.json")))
    .update(readFileSync(join(source, "package-lock.json")))
    .digest("hex");
  // The server scripts are copied every run (cheap); the packages only when the lockfile changed.
  for (const file of files) copyFileSync(join(source, file), join(dir, file));
  const stampFile = join(dir, "node_modules", STAMP);
  const node = join(dir, "node_modules", "node", "bin", "node");
  const current = existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp && existsSync(node);
  if (!current) {
    await run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
    if (!existsSync(node)) throw new Error(`npm ci in ${dir} left no ${node}`);
    writeFileSync(stampFile, stamp);
  }
  return { dir, node, installed: !current };
}
