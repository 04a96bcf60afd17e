#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=16
// The flag (also in package.json's `start`, and read from here by the bench): Node 24's V8 sizes the
// young generation by the machine's memory, up to 64 MiB a semi-space on a 24 GiB machine, which
// doubled a serving process's resident memory (README, "Memory"); 16 MiB is what Node 20 used.
// MALLOC_ARENA_MAX=2 (glibc reads it when the process starts): V8's threads, compiling PGlite's
// WebAssembly, otherwise leave ~100 MiB of freed memory spread over a dozen malloc arenas.
// Runs the compiled build of src/ when it matches the sources (bin/compiled.js), which starts in a
// fraction of the time; otherwise (a clean checkout before `npm install`, an edited source file, or
// FLEETGATE_FROM_SOURCE=1) the TypeScript sources through tsx's loader, so no build step is ever
// needed between an edit and a run.
import module from "node:module";
import { pathToFileURL } from "node:url";
import { freshBuild, root } from "./compiled.js";

const compiled = process.env.FLEETGATE_FROM_SOURCE === "1" ? undefined : freshBuild();
if (compiled) {
  // V8's compiled code of the build, kept on disk beside it (Node's compile cache): a start then
  // skips compiling the build's 17 MB of JavaScript again. NODE_COMPILE_CACHE, when set, chooses
  // the directory; where none can be written, Node runs without it.
  module.enableCompileCache?.(
    process.env.NODE_COMPILE_CACHE || `${root}node_modules/.cache/fleetgate-compile`,
  );
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli.ts");
}
