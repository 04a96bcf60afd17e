import { lt, parse, type SemVer } from "semver";

// When each supervisor endpoint appeared (balena-supervisor's docs/API.md, "Introduced in
// supervisor vX"). A device whose supervisor predates the endpoint is not called; its result
// says why. The first pattern that matches decides, so the v2 paths come before the catch-all.
const since: readonly (readonly [RegExp, string])[] = [
  [/^\/v2\/device\/vpn$/, "11.4.0"],
  [/^\/v2\/journal-logs$/, "10.2.0"],
  [/^\/v2\/cleanup-volumes$/, "10.0.0"],
  [/^\/v2\/device\/(?:name|tags)$/, "9.11.0"],
  [/^\/v2\/state\/status$/, "9.7.0"],
  [/^\/v2\/containerId$/, "8.6.0"],
  [/^\/v2\/(?:version|local\/)/, "7.21.0"],
  [/^\/v2\/applications\/(?:state|[^/]+\/state)$/, "7.12.0"],
  [/^\/v2\//, "7.0.0"],
  [/^\/v1\/device\/host-config$/, "6.6.0"],
  [/^\/v1\/healthy$/, "6.5.0"],
  [/^\/v1\/apps\//, "1.8.0"],
  [/^\/v1\/device$/, "1.6.0"],
  [/^\//, "1.1.0"],
];

/**
 * The version a device reported, in SemVer's order (a prerelease before its release, as the
 * device side reads it: src/supervisor/versions.ts); whatever follows `x.y.z[-prerelease]` is ignored.
 */
function parseReported(version: string | null): SemVer | null {
  const match = /^(\d+\.\d+\.\d+)(?:-[0-9A-Za-z.-]+)?/.exec(version ?? "");
  return match ? (parse(match[0]) ?? parse(match[1])) : null;
}

/** Why `path` cannot be sent to a supervisor of `version`, or undefined when it can. */
export function versionProblem(path: string, version: string | null): string | undefined {
  const [, minimum] = since.find(([pattern]) => pattern.test(path)) ?? [];
  if (!minimum) return undefined;
  const actual = parseReported(version);
  if (!actual) return `Supervisor version unknown; ${path} needs ${minimum} or later`;
  if (lt(actual, minimum)) return `Supervisor ${version} predates ${path} (needs ${minimum} or later)`;
  return undefined;
}
