import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isResourcePath, pathEnd } from "../../src/odata/path.ts";

// The reading of a URL's resource path by its segments, written the plain way (a character at a
// time) as the oracle of the fast split in src/odata/path.ts.
function oracleSegments(url: string): string[] {
  const mark = url.indexOf("?");
  const path = mark < 0 ? url : url.slice(0, mark);
  const segments: string[] = [];
  let quoted = false;
  let current = "";
  for (const character of path.startsWith("/") ? path.slice(1) : path) {
    if (character === "'") quoted = !quoted;
    if (character === "/" && !quoted) {
      segments.push(current);
      current = "";
    } else current += character;
  }
  segments.push(current);
  return segments;
}

function oracleIsResourcePath(url: string): boolean {
  const segments = oracleSegments(url);
  if (segments.length < 2 || segments.includes("$links") || segments.includes("")) return false;
  return !(segments.length === 2 && segments[1] === "$count" && !segments[0]?.includes("("));
}

function oraclePathEnd(url: string): string | undefined {
  const last = oracleSegments(url).at(-1);
  return ["$value", "$count", "$ref"].find((terminal) => terminal === last);
}

const pieces = [
  "device",
  "(1)",
  "(uuid='a/b')",
  "/",
  "'",
  "?",
  "$count",
  "$value",
  "$ref",
  "$links",
  "%27",
  "é",
  "😀",
  "x",
];
const urls = fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((parts) => parts.join(""));

describe("a URL's resource path", () => {
  it.each([
    ["/device(1)/belongs_to__application", true, undefined],
    ["/device(uuid='a/b')?$select=id", false, undefined],
    ["/device/$count", false, "$count"],
    ["/device(1)/owns__device/$count", true, "$count"],
    ["/device(1)/device_name/$value", true, "$value"],
    ["/device(1)/belongs_to__application/$ref?$format=json", true, "$ref"],
    ["/device/", false, undefined],
  ])("%s: a path %s, ending in %s", (url, path, end) => {
    expect(isResourcePath(url)).toBe(path);
    expect(pathEnd(url)).toBe(end);
  });

  it("is split at slashes outside quotes as the plain reading splits it, for any URL", () => {
    fc.assert(
      fc.property(urls, (url) => {
        expect(isResourcePath(url)).toBe(oracleIsResourcePath(url));
        expect(pathEnd(url)).toBe(oraclePathEnd(url));
      }),
      { numRuns: 5000 },
    );
  });
});
