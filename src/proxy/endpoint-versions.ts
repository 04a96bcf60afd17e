// When each supervisor endpoint appeared (balena-supervisor's docs/API.md, "Introduced in
// supervisor vX"). A device whose supervisor predates the endpoint is not called; its result
// says why. The first pattern that matches decides, so the v2 paths come before the catch-all.
const since: readonly (readonly [RegExp, readonly [number, number, number], string])[] = [
  [/^\/v2\/device\/vpn$/, [11, 4, 0], "11.4.0"],
  [/^\/v2\/journal-logs$/, [10, 2, 0], "10.2.0"],
  [/^\/v2\/cleanup-volumes$/, [10, 0, 0], "10.0.0"],
  [/^\/v2\/device\/(?:name|tags)$/, [9, 11, 0], "9.11.0"],
  [/^\/v2\/state\/status$/, [9, 7, 0], "9.7.0"],
  [/^\/v2\/containerId$/, [8, 6, 0], "8.6.0"],
  [/^\/v2\/(?:version|local\/)/, [7, 21, 0], "7.21.0"],
  [/^\/v2\/applications\/(?:state|[^/]+\/state)$/, [7, 12, 0], "7.12.0"],
  [/^\/v2\//, [7, 0, 0], "7.0.0"],
  [/^\/v1\/device\/host-config$/, [6, 6, 0], "6.6.0"],
  [/^\/v1\/healthy$/, [6, 5, 0], "6.5.0"],
  [/^\/v1\/apps\//, [1, 8, 0], "1.8.0"],
  [/^\/v1\/device$/, [1, 6, 0], "1.6.0"],
  [/^\//, [1, 1, 0], "1.1.0"],
];

function parse(version: string | null): [number, number, number] | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? "");
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Why `path` cannot be sent to a supervisor of `version`, or undefined when it can. */
export function versionProblem(path: string, version: string | null): string | undefined {
  const [, minimum, named] = since.find(([pattern]) => pattern.test(path)) ?? [];
  if (!minimum || !named) return undefined;
  const actual = parse(version);
  if (!actual) return `Supervisor version unknown; ${path} needs ${named} or later`;
  for (let i = 0; i < 3; i++) {
    if ((actual[i] as number) > (minimum[i] as number)) return undefined;
    if ((actual[i] as number) < (minimum[i] as number))
      return `Supervisor ${version} predates ${path} (needs ${named} or later)`;
  }
  return undefined;
}
