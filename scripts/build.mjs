// Compiles src/ (from src/cli.ts, every command included) into one ESM bundle with esbuild, in
// node_modules/.cache/fleetgate/, so a start loads a few files instead of compiling hundreds of
// TypeScript and package modules one by one. bin/fleetgate.js runs it while it matches the sources.
// Run by `npm run generate` (the postinstall) after the Prisma client and the parser are generated.
//
// The dependencies are bundled too (one file instead of hundreds to resolve and compile), except:
//  - PGlite, which loads its WebAssembly and data files from beside its own module;
//  - Prisma's query compiler (4 MB of WebAssembly as base64), which Prisma imports only on first use;
//  - pino, whose transports run its own files in worker threads;
//  - pg-native, pg's optional native driver, which is not installed.
// `import.meta.url` (and `.dirname`, `.filename`) in a source file still names that source file, so
// the paths it resolves (prisma/migrations/, src/generated/odata-parser.cjs) are read from the
// checkout at run time, as when running from source.
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";
import * as esbuild from "esbuild";
import { buildDir, manifestName, root, snapshot } from "../bin/compiled.js";

const started = performance.now();
// Built beside the final place (same depth, so the relative paths below hold), then swapped in: a
// process starting meanwhile sees either the old build, none (and runs the sources), or the new one.
const outdir = `${buildDir}.${process.pid}-${randomBytes(4).toString("hex")}`;
const external = ["@electric-sql/pglite", "@prisma/client/runtime/query_compiler_*", "pino", "pg-native"];

const sourceUrls = {
  name: "source-urls",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta")) return undefined;
      const url = `new URL(${JSON.stringify(relative(outdir, args.path).replaceAll("\\", "/"))}, import.meta.url)`;
      const contents =
        'import { fileURLToPath as __fgFileURLToPath } from "node:url";\n' +
        text
          .replaceAll(/\bimport\.meta\.url\b/g, `${url}.href`)
          .replaceAll(/\bimport\.meta\.filename\b/g, `__fgFileURLToPath(${url})`)
          .replaceAll(/\bimport\.meta\.dirname\b/g, `__fgFileURLToPath(new URL(".", ${url}))`);
      return { contents, loader: "ts", resolveDir: dirname(args.path) };
    });
  },
};

// graphql-js compares the class names of its own types on every failed `instanceof` unless NODE_ENV
// is production (jsutils/instanceOf), to warn of a second copy of graphql: a development aid that took
// 3–4% of a GraphQL request's CPU in a profile. The build is what servers run: it takes the
// production check, whatever NODE_ENV says.
const graphqlProductionCheck = {
  name: "graphql-production-check",
  setup(build) {
    build.onLoad({ filter: /[\\/]graphql[\\/]jsutils[\\/]instanceOf\.m?js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      const contents = text.replace(/const isProduction =[^;]*;/, "const isProduction = true;");
      if (contents === text) throw new Error(`graphql-production-check: no isProduction in ${args.path}`);
      return { contents, loader: "js" };
    });
  },
};

try {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { cli: "src/cli.ts" },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22.18",
    outExtension: { ".js": ".mjs" },
    external,
    // Bundled CommonJS packages call require() for Node's own modules.
    banner: {
      js: 'import { createRequire as __fgCreateRequire } from "node:module"; const require = __fgCreateRequire(import.meta.url);',
    },
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    logLevel: "warning",
    plugins: [sourceUrls, graphqlProductionCheck],
  });
  // The build is fresh while these are as they are now: every source file it was made from, this
  // script, the TypeScript settings and the installed dependencies (npm rewrites this file whenever
  // it changes node_modules).
  const sources = Object.keys(result.metafile.inputs).filter((path) => !path.includes("node_modules/"));
  const files = snapshot(
    [...sources, "scripts/build.mjs", "tsconfig.json", "node_modules/.package-lock.json"].sort(),
  );
  await writeFile(`${outdir}/${manifestName}`, `${JSON.stringify({ entry: "cli.mjs", files }, null, 1)}\n`);
  const old = `${buildDir}.old-${process.pid}`;
  await rename(buildDir, old).catch(() => {});
  await rename(outdir, buildDir);
  await rm(old, { recursive: true, force: true });
} catch (error) {
  await rm(outdir, { recursive: true, force: true });
  throw error;
}
process.stdout.write(
  `Compiled src/ to ${relative(root, buildDir)} in ${Math.round(performance.now() - started)} ms\n`,
);
