import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { citesIn, missingCites } from "./support/comment-cites.ts";
import { cycles, forbiddenImports, type ImportGraph, importGraph } from "./support/import-graph.ts";

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
  devices: [...surfaceBase, "events"],
  catalogue: surfaceBase,
  proxy: surfaceBase,
  graphql: [...surfaceBase, "proxy", "events"],
  // The device-side agent talks to the cloud over HTTP only.
  supervisor: [],
  accounts: surfaceBase,
  seed: [...surfaceBase, "catalogue"],
  http: [...surfaceBase, "odata"],
  server: [...surfaceBase, "odata", "graphql", "proxy", "devices", "catalogue", "http", "events"],
  commands: [...surfaceBase, "accounts", "catalogue", "seed", "server", "supervisor", "http"],
  cli: ["commands", ...shared],
};

const MAX_LINES = 400;

/** A source file without its comments: what it runs, not what it says. */
const codeOf = (path: string) =>
  readFileSync(path, "utf8").replaceAll(/\/\*[\s\S]*?\*\//g, "").replaceAll(/(^|\s)\/\/.*$/gm, "$1");
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
});
