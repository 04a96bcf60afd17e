import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { errorClasses } from "../src/errors.ts";

describe("the README's error table", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  it.each(errorClasses.map((errorClass) => [errorClass.name, errorClass] as const))(
    "lists %s with its status",
    (name, ErrorClass) => {
      const status = new ErrorClass("x", 1).status;
      expect(readme).toMatch(new RegExp(`\\| \`${name}\` \\| ${status} \\|`));
    },
  );
});
