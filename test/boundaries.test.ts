import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { citesIn, missingCites } from "./support/boundaries/comment-cites.ts";
import { consoleImportsOutside } from "./support/boundaries/console-imports.ts";
import {
  cycles,
  forbiddenImports,
  type ImportGraph,
  importGraph,
} from "./support/boundaries/import-graph.ts";
import {
  CROSS_CUTTING,
  helpersOutsideSupport,
  longTestFiles,
  MAX_TEST_LINES,
  unmirroredFolders,
} from "./support/boundaries/test-layout.ts";

// The layer table of ARCHITECTURE.md, as code: what each folder of src/ (or top-level module) may
// import besides itself. `shared` are leaves anyone may use: they import no layer.
const shared = ["errors", "config", "logger", "redact", "generated", "package.json"];
const surfaceBase = ["core", "model", "db", "auth", ...shared];
const layers: Record<string, readonly string[]> = {
  generated: [],
  errors: [],
  redact: [],
  config: [],
  logger: ["redact"],
  model: ["generated"],
  db: ["model", ...shared],
  auth: ["model", "db", ...shared],
  core: ["model", "db", "auth", ...shared],
  // The change bus (LISTEN/NOTIFY) between instances.
  events: ["db", ...shared],
  odata: surfaceBase,
  // Logins, session tokens, whoami and API keys: a surface like the others (src/auth holds what
  // every surface needs: callers, keys, tokens, passwords, the throttle, the predicates).
  account: surfaceBase,
  devices: [...surfaceBase, "events"],
  catalogue: surfaceBase,
  proxy: surfaceBase,
  graphql: [...surfaceBase, "proxy", "events"],
  // The device-side agent talks to the cloud over HTTP only.
  supervisor: [],
  accounts: surfaceBase,
  seed: [...surfaceBase, "catalogue"],
  http: [...surfaceBase, "odata"],
  // The browser console's static files (the console itself, console/, talks to the API over HTTP only).
  console: [...shared],
  server: [
    ...surfaceBase,
    ...["account", "odata", "graphql", "proxy", "devices", "catalogue", "http", "events", "console"],
  ],
  commands: [...surfaceBase, "accounts", "catalogue", "seed", "server", "supervisor", "http"],
  cli: ["commands", ...shared],
};

const MAX_LINES = 400;

/** Text that is an SQL statement (or a subquery of one): the checks below find where they are written. */
const STATEMENT = /\b(?:SELECT|INSERT INTO|DELETE FROM)\b|\bUPDATE\s+"/;

/**
 * The files the table of a section of ARCHITECTURE.md names in its first column: each `src/…` path,
 * and each bare `x.ts` beside the path before it in the same cell.
 */
function filesNamedIn(markdown: string, heading: string): string[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(`${heading}\n`)) ?? "";
  const named: string[] = [];
  for (const row of section.split("\n").filter((line) => line.startsWith("| `"))) {
    let folder: string | undefined;
    for (const [, path] of (row.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)) {
      if (path?.startsWith("src/")) {
        named.push(path);
        folder = dirname(path);
      } else if (path && folder && /^[\w.-]+\.ts$/.test(path)) named.push(`${folder}/${path}`);
    }
  }
  return named;
}

/** A source file without its comments: what it runs, not what it says. */
const codeOf = (path: string) =>
  readFileSync(path, "utf8")
    .replaceAll(/\/\*[\s\S]*?\*\//g, "")
    .replaceAll(/(^|\s)\/\/.*$/gm, "$1");
const root = fileURLToPath(new URL("..", import.meta.url));
const graph = importGraph(root, ["src", "bench"], ["src/generated"]);
const sources = [...graph.keys()].filter((file) => file.startsWith("src/"));
const srcGraph: ImportGraph = new Map(sources.map((file) => [file, graph.get(file) ?? []]));

describe("the boundaries of src/", () => {
  it("has no import cycle (bench/ included)", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("imports across layers only as the layer table allows", () => {
    expect(forbiddenImports(srcGraph, layers)).toEqual([]);
  });

  it(`has no source file over ${MAX_LINES} lines`, () => {
    const long = sources.filter(
      (file) => readFileSync(`${root}${file}`, "utf8").split("\n").length > MAX_LINES,
    );
    expect(long).toEqual([]);
  });

  it("cites in its comments only files that exist (src/, test/ and bench/)", () => {
    expect(missingCites(root, ["src", "test", "bench"])).toEqual([]);
  });

  it("writes SQL statements only in the core, the predicates and the files ARCHITECTURE.md's tables name", () => {
    const architecture = readFileSync(`${root}ARCHITECTURE.md`, "utf8");
    const named = [
      ...filesNamedIn(architecture, "System writes"),
      ...filesNamedIn(architecture, "Reads outside the planner"),
    ];
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((file) => !existsSync(`${root}${file}`))).toEqual([]);
    const unnamed = sources.filter(
      (file) =>
        !file.startsWith("src/core/") &&
        file !== "src/auth/policies.ts" &&
        !named.includes(file) &&
        STATEMENT.test(codeOf(`${root}${file}`)),
    );
    expect(unnamed).toEqual([]);
  });

  it('marks each system write "System write" where it is defined, as ARCHITECTURE.md promises', () => {
    const architecture = readFileSync(`${root}ARCHITECTURE.md`, "utf8");
    const unmarked = filesNamedIn(architecture, "System writes").filter(
      (file) => !readFileSync(`${root}${file}`, "utf8").includes("System write"),
    );
    expect(unmarked).toEqual([]);
  });

  it("writes pg_notify only in src/db/channels.ts, the change bus's one list of channels", () => {
    const writers = sources.filter(
      (file) => file !== "src/db/channels.ts" && /pg_notify\s*\(/.test(codeOf(`${root}${file}`)),
    );
    expect(writers).toEqual([]);
  });

  it("lets a command answered at once (proxy/command.ts) and a job (proxy/jobs/) share types, not import each other", () => {
    const jobs = sources.filter((file) => file.startsWith("src/proxy/jobs/"));
    const crossing = [
      ...jobs.filter((file) => graph.get(file)?.includes("src/proxy/command.ts")),
      ...(graph.get("src/proxy/command.ts") ?? []).filter((file) => file.startsWith("src/proxy/jobs/")),
    ];
    expect(crossing).toEqual([]);
  });

  it("reads the import statements it checks: every src file is seen, with its imports", () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(graph.get("src/odata/read.ts")).toContain("src/core/read.ts");
    // A dynamic import counts as much as a static one.
    expect(graph.get("src/graphql/http.ts")).toContain("src/graphql/yoga.ts");
  });
});

describe("the browser console (console/)", () => {
  it("imports only packages and its own files: it reaches the server over HTTP, never its code", () => {
    expect(consoleImportsOutside(root)).toEqual([]);
  });

  it("finds an import of the server's code, and nothing else", () => {
    const tree = mkdtempSync(join(tmpdir(), "fleetgate-console-"));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    };
    try {
      write("console/src/pages/a.tsx", 'import { x } from "../parts/b.ts";\nimport { h } from "preact";\n');
      write(
        "console/src/parts/b.ts",
        'import { read } from "../../../src/core/read.ts";\nexport const x = 1;\n',
      );
      write("console/src/c.ts", 'const m = await import("../../src/db/database.ts");\n');
      expect(consoleImportsOutside(tree)).toEqual([
        "console/src/c.ts: ../../src/db/database.ts",
        "console/src/parts/b.ts: ../../../src/core/read.ts",
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});

describe("the layout of test/", () => {
  it("keeps every helper in test/support/: elsewhere only *.test.ts files (and test/core/cases/' data)", () => {
    expect(helpersOutsideSupport(root)).toEqual([]);
  });

  it(`has no test file over ${MAX_TEST_LINES} lines`, () => {
    expect(longTestFiles(root)).toEqual([]);
  });

  it(`mirrors src/: each folder is a src/ folder's or a src/ file's, or one of ${CROSS_CUTTING.join(", ")}`, () => {
    expect(unmirroredFolders(root)).toEqual([]);
  });
});

describe("the checks themselves fail when they should", () => {
  it("finds a cycle, a two-file one and a longer one", () => {
    const looped: ImportGraph = new Map([
      ["src/a/x.ts", ["src/a/y.ts"]],
      ["src/a/y.ts", ["src/a/x.ts"]],
      ["src/b/p.ts", ["src/b/q.ts"]],
      ["src/b/q.ts", ["src/b/r.ts"]],
      ["src/b/r.ts", ["src/b/p.ts"]],
      ["src/c/free.ts", ["src/a/x.ts"]],
    ]);
    expect(cycles(looped)).toEqual([
      ["src/a/x.ts", "src/a/y.ts"],
      ["src/b/p.ts", "src/b/q.ts", "src/b/r.ts"],
    ]);
  });

  it("finds a forbidden import: the core reaching up into the OData surface", () => {
    const upward: ImportGraph = new Map([
      ["src/core/plan.ts", ["src/odata/parse/parse.ts", "src/model/types.ts"]],
    ]);
    expect(forbiddenImports(upward, layers)).toEqual([
      "src/core/plan.ts imports src/odata/parse/parse.ts: 'core' may not import 'odata'",
    ]);
  });

  it("finds a forbidden import: auth reaching up into the accounts surface", () => {
    const upward: ImportGraph = new Map([
      ["src/auth/caller.ts", ["src/account/login.ts", "src/db/database.ts"]],
    ]);
    expect(forbiddenImports(upward, layers)).toEqual([
      "src/auth/caller.ts imports src/account/login.ts: 'auth' may not import 'account'",
    ]);
  });

  it("finds a folder the layer table does not know", () => {
    const unknown: ImportGraph = new Map([["src/jobs/run.ts", ["src/core/read.ts"]]]);
    expect(forbiddenImports(unknown, layers)).toEqual([
      "src/jobs/run.ts: layer 'jobs' is not in the layer table",
    ]);
  });

  it("finds a comment citing a file that is gone, but not another project's file", () => {
    // Written without two slashes in a row, so that this file's own comments do not cite these.
    const comment = "/".repeat(2);
    const text = [
      `${comment} Each surface maps these (src/core/database-errors.ts).`,
      `const x = 1; ${comment} as ./statement-cache.ts keeps them`,
      `${comment} open-balena-api answers it so (src/features/api-keys/lib.ts; ours: src/auth/keys.ts).`,
    ].join("\n");
    expect(citesIn(text, new Set(["core", "auth"]))).toEqual([
      { line: 1, path: "src/core/database-errors.ts" },
      { line: 2, path: "./statement-cache.ts" },
      { line: 3, path: "src/auth/keys.ts" },
    ]);
    const tree = mkdtempSync(join(tmpdir(), "fleetgate-cites-"));
    try {
      mkdirSync(join(tree, "src", "core"), { recursive: true });
      mkdirSync(join(tree, "src", "auth"));
      writeFileSync(join(tree, "src", "core", "here.ts"), `${text}\n`);
      expect(missingCites(tree, ["src"])).toEqual([
        "src/core/here.ts:1 cites src/core/database-errors.ts",
        "src/core/here.ts:2 cites ./statement-cache.ts",
        "src/core/here.ts:3 cites src/auth/keys.ts",
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it("reads the files a table of ARCHITECTURE.md names, and finds a statement in a file none names", () => {
    const markdown = [
      "## System writes",
      "| where | what |",
      "|---|---|",
      "| `src/catalogue/store.ts`, `import.ts` | the import |",
      "| `src/devices/state.ts` `recordState` | a report |",
      "## Reads outside the planner",
      "| `src/auth/caller.ts` `fromApiKey` | a key |",
    ].join("\n");
    expect(filesNamedIn(markdown, "System writes")).toEqual([
      "src/catalogue/store.ts",
      "src/catalogue/import.ts",
      "src/devices/state.ts",
    ]);
    expect(filesNamedIn(markdown, "Reads outside the planner")).toEqual(["src/auth/caller.ts"]);
    expect(STATEMENT.test('db.query({ text: `SELECT "id" FROM "user"`, values: [] })')).toBe(true);
    expect(STATEMENT.test('sql`UPDATE "device" SET "is_online" = false`')).toBe(true);
    expect(STATEMENT.test("// Selects the rows: UPDATE them later")).toBe(false);
  });

  it("finds a helper outside test/support/ and a test file over the limit, and nothing else", () => {
    const tree = mkdtempSync(join(tmpdir(), "fleetgate-layout-"));
    const write = (path: string, lines: number) => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), "const line = 1;\n".repeat(lines));
    };
    try {
      write("test/support/world.ts", 1);
      write("test/support/sdk/scenario.ts", 1);
      write("test/core/cases/filter/case.ts", 1);
      write("test/odata/fixture.ts", 1);
      write("test/odata/world.mjs", 1);
      write("test/odata/at-limit.test.ts", MAX_TEST_LINES);
      write("test/odata/over-limit.test.ts", MAX_TEST_LINES + 1);
      write("test/support/long-helper.ts", MAX_TEST_LINES + 1);
      expect(helpersOutsideSupport(tree)).toEqual(["test/odata/fixture.ts", "test/odata/world.mjs"]);
      expect(longTestFiles(tree)).toEqual([`test/odata/over-limit.test.ts: ${MAX_TEST_LINES + 1} lines`]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it("finds a folder of tests that mirrors nothing in src/, and nothing else", () => {
    const tree = mkdtempSync(join(tmpdir(), "fleetgate-mirror-"));
    const write = (path: string) => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), "const line = 1;\n");
    };
    try {
      for (const file of ["src/proxy/jobs/lane.ts", "src/core/plan.ts", "src/cli.ts", "src/config.ts"]) {
        write(file);
      }
      write("test/proxy/jobs/lane.test.ts");
      write("test/core/plan.test.ts");
      write("test/core/cases/filter/eq.http");
      write("test/cli/help.test.ts");
      write("test/config.test.ts");
      write("test/support/odata/world.ts");
      write("test/docs/readme.test.ts");
      // Mirroring nothing: a folder named after a topic, a misspelt subfolder, a cross-cutting
      // folder the list does not know.
      write("test/jobs/lane.test.ts");
      write("test/proxy/job/lane.test.ts");
      write("test/e2e/fleet.test.ts");
      expect(unmirroredFolders(tree)).toEqual(["test/e2e", "test/jobs", "test/proxy/job"]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
