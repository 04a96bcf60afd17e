import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { envExample, readmeDefaults } from "../../scripts/env-example.ts";
import { configSchema, loadConfig } from "../../src/config.ts";

// Issue 31: .env.example lists every setting with its default, generated from the config schema
// (`npm run env-example`), and LICENSE is the license package.json names.

const root = new URL("../../", import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), "utf8");

describe(".env.example", () => {
  const committed = read(".env.example");

  it("is what `npm run env-example` writes from the schema now", () => {
    expect(committed).toBe(envExample());
  });

  it("names every setting once, each in the README's table", () => {
    const documented = readmeDefaults(read("README.md"));
    for (const name of Object.keys(configSchema.shape)) {
      expect(committed.match(new RegExp(`^# ${name}=`, "gm")), name).toHaveLength(1);
      expect(documented.has(name), `${name} in the README's Configuration table`).toBe(true);
    }
  });

  it("gives the defaults the server applies: set as written, they change nothing", () => {
    const written = Object.fromEntries(
      [...committed.matchAll(/^# ([A-Z0-9_]+)=(.+)$/gm)].map((match) => [
        match[1] as string,
        match[2] as string,
      ]),
    );
    expect(Object.keys(written).length).toBeGreaterThan(50);
    expect(loadConfig(written)).toEqual(loadConfig({}));
  });
});

describe("LICENSE", () => {
  it("is the license package.json names", () => {
    expect(packageJson.license).toBe("Apache-2.0");
    const license = read("LICENSE");
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
  });
});
