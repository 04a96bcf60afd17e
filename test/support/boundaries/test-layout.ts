import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// The layout of test/ (issue 32): every helper and fixture in test/support/, so that a folder of
// tests holds tests only and a helper is found in one place; and no test file so long that its
// topics want files of their own.

export const MAX_TEST_LINES = 600;

/** Code a test could import: a helper, whatever its language. */
const SOURCE = /\.(?:[cm]?[jt]s|tsx)$/;
/** Folders of test/ that hold data read by a test, not code. */
const DATA = ["core/cases/"];

/** Every file under `root`/test, as a path from `root` with forward slashes. */
function testFiles(root: string): string[] {
  return readdirSync(join(root, "test"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(root.length)
        .replace(/^[\\/]+/, ""),
    )
    .map((path) => path.replaceAll("\\", "/"))
    .sort();
}

/** Code files under test/ outside test/support/ that are not `*.test.ts` (data folders left out). */
export function helpersOutsideSupport(root: string): string[] {
  return testFiles(root).filter(
    (path) =>
      SOURCE.test(path) &&
      !path.endsWith(".test.ts") &&
      !path.startsWith("test/support/") &&
      !DATA.some((folder) => path.startsWith(`test/${folder}`)),
  );
}

/** `path: N lines` for each `*.test.ts` under test/ longer than MAX_TEST_LINES, as `wc -l` counts. */
export function longTestFiles(root: string): string[] {
  return testFiles(root)
    .filter((path) => path.endsWith(".test.ts"))
    .map((path) => ({ path, lines: readFileSync(join(root, path), "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > MAX_TEST_LINES)
    .map(({ path, lines }) => `${path}: ${lines} lines`);
}
