import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/**
 * The imports of the browser console's sources (`console/src` under `root`) that reach outside
 * `console/`, as `file: specifier`. The console is a client of the HTTP API: it may import packages
 * and its own files, never the server's code (src/), which would be a second path to the data.
 */
export function consoleImportsOutside(root: string): string[] {
  const base = join(root, "console");
  const found: string[] = [];
  for (const file of filesUnder(join(base, "src")).filter((path) => /\.(tsx?|css)$/.test(path))) {
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? "";
      const local = specifier.startsWith(".") || specifier.startsWith("/");
      const target = local ? normalize(join(dirname(file), specifier)) : "";
      if (local && relative(base, target).startsWith(".."))
        found.push(`${relative(root, file)}: ${specifier}`);
    }
  }
  return found;
}
