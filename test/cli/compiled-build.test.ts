import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));

// bin/fleetgate.js runs the compiled build (scripts/build.mjs) only while it matches the sources.
// In a copy of the checkout (its own build directory, the same installed packages): the build is
// used when it is current, and an edited source runs as edited, before and after the next build.
describe("bin/fleetgate.js and the compiled build", { timeout: 120_000 }, () => {
  const copy = mkdtempSync(join(tmpdir(), "fleetgate-build-"));
  afterAll(() => rmSync(copy, { recursive: true, force: true }));
  for (const path of ["bin", "scripts", "src", "prisma", "package.json", "tsconfig.json"]) {
    cpSync(join(repo, path), join(copy, path), { recursive: true, preserveTimestamps: true });
  }
  mkdirSync(join(copy, "node_modules"));
  for (const entry of readdirSync(join(repo, "node_modules"))) {
    if (entry !== ".cache") symlinkSync(join(repo, "node_modules", entry), join(copy, "node_modules", entry));
  }
  const buildDir = join(copy, "node_modules/.cache/fleetgate");
  const usage = async (env: Record<string, string> = {}) => {
    const { stdout, stderr } = await run(process.execPath, [join(copy, "bin/fleetgate.js"), "help"], {
      env: { ...process.env, FLEETGATE_FROM_SOURCE: "", ...env },
    });
    return stdout + stderr;
  };
  const build = () => run(process.execPath, [join(copy, "scripts/build.mjs")], { cwd: copy });
  // Marks the program's description in the help (it is written in src/cli.ts), so an output
  // shows which of the two ran.
  const description = /fleetgate[^:"]*: the cloud data API/;
  const markBuild = () => {
    const entry = join(buildDir, "cli.mjs");
    writeFileSync(
      entry,
      readFileSync(entry, "utf8").replace(description, "fleetgate (built): the cloud data API"),
    );
  };
  const editSource = (text: string) => {
    const cli = join(copy, "src/cli.ts");
    writeFileSync(
      cli,
      readFileSync(cli, "utf8").replace(description, `fleetgate ${text}: the cloud data API`),
    );
  };

  it("runs the sources through tsx until there is a build", async () => {
    expect(await usage()).toContain("fleetgate: the cloud data API");
  });

  it("runs the build while it matches the sources, unless FLEETGATE_FROM_SOURCE=1", async () => {
    await build();
    markBuild();
    expect(await usage()).toContain("fleetgate (built): the cloud data API");
    expect(await usage({ FLEETGATE_FROM_SOURCE: "1" })).toContain("fleetgate: the cloud data API");
  });

  it("runs an edited source as edited, and builds it next time", async () => {
    editSource("(edited)");
    expect(await usage()).toContain("fleetgate (edited): the cloud data API");
    await build();
    expect(readFileSync(join(buildDir, "cli.mjs"), "utf8")).toContain(
      "fleetgate (edited): the cloud data API",
    );
    markBuild();
    expect(await usage()).toContain("fleetgate (built): the cloud data API");
  });

  it("notices a changed dependency of a source file, and a removed one", async () => {
    const parser = join(copy, "src/odata/parse/parse.ts");
    writeFileSync(parser, `${readFileSync(parser, "utf8")}\n`);
    expect(await usage()).toContain("fleetgate (edited): the cloud data API");
    await build();
    markBuild();
    expect(await usage()).toContain("fleetgate (built): the cloud data API");
    rmSync(join(copy, "src/commands/org.ts"));
    // Running from source now: org.ts is gone, but the usage text is still there to print.
    expect(await usage()).toContain("fleetgate (edited): the cloud data API");
  });
});
