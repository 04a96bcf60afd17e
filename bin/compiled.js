// The compiled build of src/ (scripts/build.mjs, run by `npm run generate` at install) and the test
// of whether it still matches the sources. bin/fleetgate.js runs the build only when every file it
// was built from is exactly as it was then (same size and modification time); otherwise, as after
// any edit, it runs the sources through tsx. So a start never runs stale code, and an edit costs a
// slower start until the next `npm run generate` (or `node scripts/build.mjs`), never a wrong one.
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../", import.meta.url));
/** Where the build lives: a cache beside the dependencies it was built with, rebuilt with them. */
export const buildDir = `${root}node_modules/.cache/fleetgate`;
export const manifestName = "inputs.json";

/** Size and modification time of each file (paths relative to the repository root). */
export function snapshot(paths) {
  const files = {};
  for (const path of paths) {
    const stat = statSync(`${root}${path}`, { throwIfNoEntry: false });
    files[path] = stat ? [stat.size, stat.mtimeMs] : null;
  }
  return files;
}

/** The build's entry file when the build exists and matches the sources, otherwise undefined. */
export function freshBuild(dir = buildDir) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(`${dir}/${manifestName}`, "utf8"));
  } catch {
    return undefined; // never built (or being replaced right now)
  }
  const now = snapshot(Object.keys(manifest.files));
  for (const [path, then] of Object.entries(manifest.files)) {
    const current = now[path];
    if (current === null || then === null) {
      if (current !== then) return undefined;
    } else if (current[0] !== then[0] || current[1] !== then[1]) return undefined;
  }
  return `${dir}/${manifest.entry}`;
}
