import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { binLaunch } from "../../bench/processes.ts";

// `npx fleetgate serve` (the bin's `env -S` line), `npm start` and the bench run the server with the
// same V8 flags and malloc setting, so the memory the bench reports is the memory a user's server has.
describe("the Node flags of fleetgate serve", () => {
  it("are the same in the bin's first line, npm start and the bench", () => {
    const { env, flags } = binLaunch();
    expect(flags).toContain("--max-semi-space-size=16");
    expect(env).toEqual({ MALLOC_ARENA_MAX: "2" });
    const start = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } }).scripts
      .start;
    expect(start).toBe(`MALLOC_ARENA_MAX=2 node ${flags.join(" ")} bin/fleetgate.js serve`);
  });

  it("reach Node through the bin's first line", () => {
    // The linked bin (`npx fleetgate`) runs the first line's `env -S` command.
    const shebang = readFileSync("bin/fleetgate.js", "utf8").split("\n", 1)[0] as string;
    const seen = execFileSync(
      "/usr/bin/env",
      [
        shebang.replace(/^#!\/usr\/bin\/env /, "").concat(" -p"),
        "JSON.stringify({ execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX })",
      ],
      { encoding: "utf8", env: { ...process.env, MALLOC_ARENA_MAX: "" } },
    );
    expect(JSON.parse(seen)).toEqual({ execArgv: expect.arrayContaining(binLaunch().flags), arenas: "2" });
  });
});
