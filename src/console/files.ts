import { readdirSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm run build:console` (scripts/build-console.mjs, run at install) writes the console. */
export const consoleDir = fileURLToPath(
  new URL("../../node_modules/.cache/fleetgate-console/", import.meta.url),
);

export interface Asset {
  readonly type: string;
  readonly identity: Buffer;
  readonly br: Buffer | undefined;
  readonly gzip: Buffer | undefined;
}

export interface ConsoleFiles {
  readonly index: Buffer;
  /** By file name: each name carries the hash of its content, so a name never changes meaning. */
  readonly assets: ReadonlyMap<string, Asset>;
}

const types: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

const readIfThere = (path: string) => {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
};

/** The built console, read once into memory (about 0.5 MB with its compressed forms); undefined when not built. */
export function loadConsole(dir = consoleDir): ConsoleFiles | undefined {
  const index = readIfThere(`${dir}/index.html`);
  if (!index) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(`${dir}/assets`)) {
    const type = types[extname(name)];
    if (!type) continue; // the .br and .gz forms, read beside their file
    const path = `${dir}/assets/${name}`;
    assets.set(name, {
      type,
      identity: readFileSync(path),
      br: readIfThere(`${path}.br`),
      gzip: readIfThere(`${path}.gz`),
    });
  }
  return { index, assets };
}
