import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };

// Issue 31, "one Node story": fleetgate's Node (.nvmrc: CI's main run, the bench, a developer's) and
// the oldest it supports (engines: the types it is checked against, the bundle's target, CI's smoke
// runs) agree with each other everywhere they are written.

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

describe("one Node story", () => {
  const [, least = "", leastMinor = ""] = /^>=(\d+)\.(\d+)$/.exec(packageJson.engines.node) ?? [];
  const main = read(".nvmrc").trim();

  it("fleetgate's Node is an LTS major that engines accepts, and CI's main run uses it", () => {
    expect(main).toMatch(/^\d*[02468]$/);
    expect(Number(main)).toBeGreaterThanOrEqual(Number(least));
    const ci = read(".ci/run");
    expect(ci).toContain("main=$(cat .nvmrc)");
    expect(ci).toMatch(/on_node "\$\{main\}" npm ci\n/);
    expect(ci).toMatch(/on_node "\$\{main\}" npm test\n/);
    expect(read("README.md")).toContain(`npx -p node@${main} -- npm run bench`);
  });

  it("the oldest supported Node is what the code is checked and built for, and CI smoke-tests it", () => {
    expect(packageJson.devDependencies["@types/node"]).toMatch(new RegExp(`^\\^${least}\\.`));
    expect(read("scripts/build.mjs")).toContain(`target: "node${least}.${leastMinor}"`);
    expect(read(".ci/run")).toMatch(new RegExp(`for major in [\\d ]*\\b${least}\\b`));
  });
});
