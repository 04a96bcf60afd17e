import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// The layout of test/ (issue 32): every helper and fixture in test/support/, so that a folder of
// tests holds tests only and a helper is found in one place; and no test file so long that its
// topics want files of their own.
//
// Tests mirror the tree (issue 49, item 5), so the tests of a module are found where it is:
// - test/<path>/ holds the tests of src/<path>/, or of src/<path>.ts: test/proxy/jobs/ those of
//   src/proxy/jobs/, test/server/ those of src/server.ts and of the `fleetgate serve` process that
//   runs it (its start, faults and shutdown), test/cli/ those of src/cli.ts and the commands under
//   src/commands/ (one unit, the command line; serve aside).
// - A test lives with what it holds, whichever route it reaches it by: the planner's nesting limit,
//   sent through OData and GraphQL, is test/core/'s; the proxy's rules, sent by balena-sdk or to
//   real `fleetgate fleet` devices, test/proxy/'s; the supervisor against the real server,
//   test/supervisor/'s.
// - test/'s own root holds the tests of src/'s root leaves (config.ts, errors.ts, logger.ts,
//   redact.ts), and boundaries.test.ts, which reads the whole tree.
// - test/support/ is grouped by what it supports: its root holds what tests of every folder use
//   (databases, servers, processes, the global setup, inject), each subfolder one kind of test.
// Folders that mirror nothing are CROSS_CUTTING, each for its reason below.

export const MAX_TEST_LINES = 600;

/** Code a test could import: a helper, whatever its language. */
const SOURCE = /\.(?:[cm]?[jt]s|tsx)$/;
/** Folders of test/ that hold data read by a test, not code. */
const DATA = ["core/cases/"];

/** The folders of test/ that mirror no folder or file of src/, and why each is one of its own. */
export const CROSS_CUTTING: readonly string[] = [
  // Helpers and fixtures (above).
  "support",
  // Real third-party clients' suites (balena-sdk's two lines, the balena clients' requests): each
  // scenario crosses every surface as a client sees the API, so it mirrors none of them.
  "clients",
  // What the repository's own documents and settings promise, run as written: the README's examples
  // and walk-throughs, .env.example and LICENSE, the Node versions of .nvmrc, engines and .ci/run.
  "docs",
  // bench/, the benchmarks beside src/, run small.
  "bench",
];

/** Every file (or folder) under `root`/test, as a path from `root` with forward slashes. */
function testFiles(root: string, folders = false): string[] {
  return readdirSync(join(root, "test"), { recursive: true, withFileTypes: true })
    .filter((entry) => (folders ? entry.isDirectory() : entry.isFile()))
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

/**
 * Folders under test/ (at any depth) that mirror neither a folder src/<path>/ nor a file
 * src/<path>.ts; CROSS_CUTTING folders and data folders left out.
 */
export function unmirroredFolders(root: string): string[] {
  return testFiles(root, true).filter((folder) => {
    const path = folder.slice("test/".length);
    if (CROSS_CUTTING.includes(path.split("/")[0] as string)) return false;
    if (DATA.some((data) => `${path}/`.startsWith(data))) return false;
    return !existsSync(join(root, "src", path)) && !existsSync(join(root, "src", `${path}.ts`));
  });
}
