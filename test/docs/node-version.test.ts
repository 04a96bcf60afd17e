import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };

// .ci/run runs a smoke part of the suite on every Node major fleetgate supports, with
// EXPECT_NODE_MAJOR set: this proves the run (its workers included) really was on that Node, and
// that the Node satisfies package.json's engines. The machine's own Node runs the full suite.

describe.runIf(process.env.EXPECT_NODE_MAJOR)("the Node of a smoke run", () => {
  it("is the major .ci/run asked for, and one package.json's engines accepts", () => {
    const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
    expect(String(major)).toBe(process.env.EXPECT_NODE_MAJOR);
    const [, least = "", leastMinor = ""] = /^>=(\d+)\.(\d+)$/.exec(packageJson.engines.node) ?? [];
    expect(major > Number(least) || (major === Number(least) && minor >= Number(leastMinor))).toBe(true);
  });
});
