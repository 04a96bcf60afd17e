#!/usr/bin/env node
// Runs the compiled build of src/ when it matches the sources (bin/compiled.js), which starts in a
// fraction of the time; otherwise (a clean checkout before `npm install`, an edited source file, or
// FLEETGATE_FROM_SOURCE=1) the TypeScript sources through tsx's loader, so no build step is ever
// needed between an edit and a run.
import { pathToFileURL } from "node:url";
import { freshBuild } from "./compiled.js";

const compiled = process.env.FLEETGATE_FROM_SOURCE === "1" ? undefined : freshBuild();
if (compiled) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli.ts");
}
