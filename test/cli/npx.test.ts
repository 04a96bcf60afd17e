import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };

// Issue 31: `npx fleetgate …`, the command the README and the help use, runs the project's own
// bin/fleetgate.js from node_modules/.bin (linked at install by scripts/link-bin.mjs), instead of
// installing the project into npx's cache and reading the whole dependency tree on every call.

const root = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

describe("npx fleetgate", { timeout: 120_000 }, () => {
  const cache = mkdtempSync(join(tmpdir(), "fleetgate-npx-cache-"));
  afterAll(() => rmSync(cache, { recursive: true, force: true }));

  it("is the linked bin/fleetgate.js, and package.json has no bin that npx would install", () => {
    expect(readlinkSync(join(root, "node_modules/.bin/fleetgate"))).toBe("../../bin/fleetgate.js");
    expect("bin" in packageJson).toBe(false);
    expect(packageJson.scripts.postinstall).toContain("scripts/link-bin.mjs");
  });

  it("runs at once, installing nothing into npx's cache, even with an empty one", async () => {
    const started = performance.now();
    const { stdout } = await run("npx", ["fleetgate", "--version"], {
      cwd: root,
      env: {
        // Not npm's settings of the run around this one: under `npx --package node@24 -- npm test`
        // (.ci/run) they hold `package=node@24`, which this npx would then install too.
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
        npm_config_cache: cache,
        npm_config_offline: "true",
        npm_config_update_notifier: "false",
      },
    });
    const seconds = (performance.now() - started) / 1000;
    expect(stdout.trim()).toBe(packageJson.version);
    expect(existsSync(join(cache, "_npx"))).toBe(false);
    // Installing the project into an empty cache took about 30 s; the linked bin well under 10.
    expect(seconds).toBeLessThan(10);
  });
});
