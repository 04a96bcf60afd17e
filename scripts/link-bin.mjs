// `npx fleetgate` (what the README and the CLI's help say) runs node_modules/.bin/fleetgate, which
// this links to bin/fleetgate.js at install (the postinstall). npm links the bins of dependencies
// there, never the project's own: with a `bin` in package.json, npx instead installs the project
// into its own cache (~/.npm/_npx) and reads the whole dependency tree on every call, about 5 s a
// call (30 s the first time) against 0.2 s for `node bin/fleetgate.js`. So package.json has no
// `bin` (the package is private: never installed from a registry), and the link takes its place.
import { mkdirSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const link = fileURLToPath(new URL("../node_modules/.bin/fleetgate", import.meta.url));
const target = "../../bin/fleetgate.js";

let current;
try {
  current = readlinkSync(link);
} catch {
  current = undefined;
}
if (current !== target) {
  mkdirSync(dirname(link), { recursive: true });
  rmSync(link, { force: true });
  symlinkSync(target, link);
}
