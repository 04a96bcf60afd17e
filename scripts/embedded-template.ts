// At install (the postinstall): the embedded database's template, so that a first start copies a
// data directory instead of running initdb (src/db/embedded-first-start.ts).
import { embeddedTemplate } from "../src/db/embedded-first-start.ts";

const began = performance.now();
const template = await embeddedTemplate();
process.stdout.write(
  `embedded database template: ${template} (${Math.round(performance.now() - began)} ms)\n`,
);
