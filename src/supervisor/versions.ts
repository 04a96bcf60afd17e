import { compare, gte, parse, type SemVer } from "semver";

// Supervisor versions: which part of the device API a given supervisor has.
// `fleetgate supervisor --supervisor-version X` serves exactly what X served.

export type Version = SemVer;

export const CURRENT_SUPERVISOR_VERSION = "17.1.4";

/** What each part of the API needs; the dates come from balena-supervisor's changelog. */
export const FEATURE_SINCE = {
  api: "1.1.0",
  device: "1.6.0",
  apps: "1.8.0",
  healthy: "6.5.0",
  hostConfig: "6.6.0",
  proxyDns: "16.6.0",
  // The v2 API, from the supervisor's docs/API.md ("Introduced in supervisor vX").
  v2Actions: "7.0.0",
  v2AppState: "7.12.0",
  v2Local: "7.21.0",
  v2ServiceName: "8.2.2",
  v2ContainerId: "8.6.0",
  v2StateStatus: "9.7.0",
  v2DeviceInfo: "9.11.0",
  v2Cleanup: "10.0.0",
  v2Journal: "10.2.0",
  v2JournalFormat: "10.3.0",
  v2Vpn: "11.4.0",
} as const;

export type Feature = keyof typeof FEATURE_SINCE;

// The short forms supervisors were named by (`1.6`, `v6.5.0`) padded to SemVer's three parts.
const SHORT = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+].*)?$/;

/**
 * Parses `1.6`, `v6.5.0`, `17.1.4-beta`, `17.1.4+rev2`; null when it is no version. SemVer's order
 * (the `semver` package): a prerelease comes before its release, build metadata counts for nothing.
 */
export function parseVersion(text: string): Version | null {
  const match = SHORT.exec(text.trim());
  if (!match) return null;
  return parse(`${match[1]}.${match[2] ?? 0}.${match[3] ?? 0}${match[4] ?? ""}`, { loose: true });
}

export function compareVersions(a: Version, b: Version): number {
  return compare(a, b);
}

export function hasFeature(version: Version, feature: Feature): boolean {
  return gte(version, FEATURE_SINCE[feature]);
}
