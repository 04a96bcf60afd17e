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
  importsInto,
  longestChain,
} from "./support/boundaries/import-graph.ts";
import {
  protocolAnswersInCore,
  refusalClasses,
  refusalsAnsweredOutside,
  type Source,
} from "./support/boundaries/refusal-answers.ts";
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

// GraphQL's two halves (ARCHITECTURE.md, "GraphQL"): execution/ runs what schema/ defines, so
// schema/ never imports execution/; and a reader follows a request from the route down to the
// GraphQL view of the model in at most this many files (13 before the halves, issue 49).
const GRAPHQL_SCHEMA = "src/graphql/schema/";
const GRAPHQL_EXECUTION = "src/graphql/execution/";
const MAX_GRAPHQL_CHAIN = 10;

/** Text that is an SQL statement (or a subquery of one): the checks below find where they are written. */
const STATEMENT = /\b(?:SELECT|INSERT INTO|DELETE FROM)\b|\bUPDATE\s+"/;

/** SQL text that moves a command job or its results: an INSERT, UPDATE or DELETE on their tables. */
const JOB_STATEMENT =
  /\b(?:INSERT\s+INTO|UPDATE(?:\s+ONLY)?|DELETE\s+FROM|MERGE\s+INTO)\s+"?command_(?:job|result)\b/i;
/** The one module that moves them: a job's statuses, its transitions, and the statements of each. */
const JOB_LIFECYCLE = "src/core/job-lifecycle/";

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
/** Each import between a file under `one` and a file under `other`, either way. */
const crossings = (graph: ImportGraph, one: string, other: string): string[] =>
  [...graph].flatMap(([file, imports]) =>
    imports
      .filter(
        (target) =>
          (file.startsWith(one) && target.startsWith(other)) ||
          (file.startsWith(other) && target.startsWith(one)),
      )
      .map((target) => `${file} imports ${target}`),
  );

const root = fileURLToPath(new URL("..", import.meta.url));
const graph = importGraph(root, ["src", "bench"], ["src/generated"]);
const sources = [...graph.keys()].filter((file) => file.startsWith("src/"));
const srcGraph: ImportGraph = new Map(sources.map((file) => [file, graph.get(file) ?? []]));

/**
 * Where a refusal may become another answer (test/support/boundaries/refusal-answers.ts): the HTTP renderer,
 * GraphQL's, and each surface's own rule, which src/server.ts gives the HTTP renderer of its routes.
 */
const isRenderer = (file: string) =>
  file === "src/http/errors.ts" ||
  file === "src/graphql/errors.ts" ||
  /^src\/[a-z]+\/refusals\.ts$/.test(file);
const withText = (file: string): Source => ({
  file,
  text: readFileSync(`${root}${file}`, "utf8"),
  code: codeOf(`${root}${file}`),
});

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

  it(`moves command jobs and their results only in their lifecycle (${JOB_LIFECYCLE})`, () => {
    const movers = sources.filter(
      (file) => !file.startsWith(JOB_LIFECYCLE) && JOB_STATEMENT.test(codeOf(`${root}${file}`)),
    );
    expect(movers).toEqual([]);
    // What it checks is there to find: the lifecycle's own statements.
    expect(JOB_STATEMENT.test(codeOf(`${root}${JOB_LIFECYCLE}cancel.ts`))).toBe(true);
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

  it("answers a refusal as another error only in a surface's renderer, and the core names no protocol's answer", () => {
    const files = sources.map(withText);
    expect(refusalClasses(files)).toEqual(
      new Set(["Unauthorized", "Forbidden", "NotFound", "NotAUser", "RowNotFound", "RowNotWritable"]),
    );
    expect(refusalsAnsweredOutside(files, isRenderer)).toEqual([]);
    expect(protocolAnswersInCore(files)).toEqual([]);
    // Each surface's rule is its renderer's: src/server.ts hands every one to the HTTP renderer.
    const server = readFileSync(`${root}src/server.ts`, "utf8");
    const rules = sources.filter((file) => /^src\/[a-z]+\/refusals\.ts$/.test(file));
    expect(rules.length).toBeGreaterThanOrEqual(4);
    expect(rules.filter((file) => !server.includes(`./${file.slice("src/".length)}`))).toEqual([]);
  });

  it("lets a command answered at once (proxy/command.ts) and a job (proxy/jobs/) share types, not import each other", () => {
    const jobs = sources.filter((file) => file.startsWith("src/proxy/jobs/"));
    const crossing = [
      ...jobs.filter((file) => graph.get(file)?.includes("src/proxy/command.ts")),
      ...(graph.get("src/proxy/command.ts") ?? []).filter((file) => file.startsWith("src/proxy/jobs/")),
    ];
    expect(crossing).toEqual([]);
  });

  it("renders an OData read in pinejs's format (odata/pinejs/) and in OData v4's (odata/v4/) side by side, neither importing the other", () => {
    expect(crossings(srcGraph, "src/odata/pinejs/", "src/odata/v4/")).toEqual([]);
  });

  it("keeps GraphQL's schema/ from its execution/: the schema never imports how it is run", () => {
    expect(importsInto(srcGraph, GRAPHQL_SCHEMA, GRAPHQL_EXECUTION)).toEqual([]);
  });

  it(`keeps GraphQL's imports at most ${MAX_GRAPHQL_CHAIN} files deep from its route (src/graphql/http.ts)`, () => {
    const chain = longestChain(srcGraph, "src/graphql/http.ts", "src/graphql/");
    expect(chain.length).toBeGreaterThan(3);
    expect(chain.length > MAX_GRAPHQL_CHAIN ? chain : []).toEqual([]);
  });

  it("reads the import statements it checks: every src file is seen, with its imports", () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(graph.get("src/odata/read.ts")).toContain("src/core/read.ts");
    // A dynamic import counts as much as a static one.
    expect(graph.get("src/graphql/http.ts")).toContain("src/graphql/graphql-server.ts");
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

  it("finds an import between the two renderings of an OData read, either way", () => {
    const crossed: ImportGraph = new Map([
      ["src/odata/pinejs/read.ts", ["src/odata/v4/serialize.ts", "src/odata/reply.ts"]],
      ["src/odata/v4/read.ts", ["src/odata/pinejs/serialize.ts", "src/odata/v4/paging.ts"]],
      ["src/odata/read.ts", ["src/odata/pinejs/read.ts", "src/odata/v4/read.ts"]],
    ]);
    expect(crossings(crossed, "src/odata/pinejs/", "src/odata/v4/")).toEqual([
      "src/odata/pinejs/read.ts imports src/odata/v4/serialize.ts",
      "src/odata/v4/read.ts imports src/odata/pinejs/serialize.ts",
    ]);
  });

  it("finds GraphQL's schema importing its execution, and the longest chain of imports", () => {
    const graphql: ImportGraph = new Map([
      ["src/graphql/http.ts", ["src/graphql/execution/run.ts", "src/graphql/context.ts"]],
      ["src/graphql/execution/run.ts", ["src/graphql/schema/fields.ts", "src/core/read.ts"]],
      ["src/graphql/schema/fields.ts", ["src/graphql/context.ts", "src/graphql/execution/loaders.ts"]],
      ["src/graphql/execution/loaders.ts", ["src/graphql/schema/model.ts"]],
      ["src/graphql/schema/model.ts", []],
      ["src/graphql/context.ts", []],
      ["src/core/read.ts", ["src/core/plan.ts"]],
      ["src/core/plan.ts", []],
    ]);
    expect(importsInto(graphql, GRAPHQL_SCHEMA, GRAPHQL_EXECUTION)).toEqual([
      "src/graphql/schema/fields.ts imports src/graphql/execution/loaders.ts",
    ]);
    expect(longestChain(graphql, "src/graphql/http.ts", "src/graphql/")).toEqual([
      "src/graphql/http.ts",
      "src/graphql/execution/run.ts",
      "src/graphql/schema/fields.ts",
      "src/graphql/execution/loaders.ts",
      "src/graphql/schema/model.ts",
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

  it("finds a statement that moves a command job or a result, and not one that reads or locks them", () => {
    expect(JOB_STATEMENT.test('sql`UPDATE "command_result" r SET "status" = \'running\'`')).toBe(true);
    expect(JOB_STATEMENT.test('sql`INSERT INTO "command_job" ("method") VALUES ($1)`')).toBe(true);
    expect(JOB_STATEMENT.test("DELETE FROM command_result WHERE id = 1")).toBe(true);
    expect(JOB_STATEMENT.test('WITH s AS (update "command_job" SET "status" = $1)')).toBe(true);
    expect(JOB_STATEMENT.test('SELECT "id" FROM "command_job" WHERE "id" = $1 FOR UPDATE')).toBe(false);
    expect(JOB_STATEMENT.test('SELECT count(*) FROM "command_result" FOR UPDATE SKIP LOCKED')).toBe(false);
    expect(JOB_STATEMENT.test('UPDATE "device" SET "is_online" = false')).toBe(false);
  });

  it("finds a refusal answered as another outside the renderers, and a protocol's answer named in the core", () => {
    const source = (file: string, text: string): Source => ({ file, text, code: text });
    const files = [
      source("src/errors.ts", "export class Forbidden extends FleetgateError {}"),
      source("src/proxy/send-command.ts", "export class NotAUser extends Forbidden {}"),
      source("src/proxy/strict.ts", "export class NotTheOwner extends NotAUser {}"),
      // Answered as another outside a renderer, by a subclass's subclass: found.
      source("src/proxy/routes.ts", "throw error instanceof NotTheOwner ? new Unauthorized() : error;"),
      // Over lines, in a block: found.
      source(
        "src/account/keys.ts",
        "if (error instanceof NotFound) {\n  throw new FleetgateError(m, 500, c);\n}",
      ),
      // Handled, not answered as another (no new error in its statement): not found.
      source("src/odata/write.ts", "if (error instanceof NotFound) return undefined;\nthrow new Error(x);"),
      // Not a refusal class: not found.
      source(
        "src/graphql/root-reads.ts",
        "return reason instanceof Error ? reason : new Error(String(reason));",
      ),
      // In a renderer: not found.
      source(
        "src/devices/refusals.ts",
        "return refusal instanceof Forbidden ? new Unauthorized() : refusal;",
      ),
      // The core: a status and Unauthorized, in a comment too; GraphQL's Forbidden is no protocol's.
      source("src/core/writable-row.ts", "// one they may only read is a 401\nthrow new Unauthorized();"),
      source("src/core/write/candidates.ts", "// the 4013th row\nthrow new Forbidden(m);"),
    ];
    expect(refusalsAnsweredOutside(files, isRenderer)).toEqual([
      "src/proxy/routes.ts: instanceof NotTheOwner … new Unauthorized",
      "src/account/keys.ts: instanceof NotFound … new FleetgateError",
    ]);
    expect(protocolAnswersInCore(files)).toEqual([
      "src/core/writable-row.ts: 401",
      "src/core/writable-row.ts: Unauthorized",
    ]);
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
