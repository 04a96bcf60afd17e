// Supervisor versions: which part of the device API a given supervisor has.
// `fleetgate supervisor --supervisor-version X` serves exactly what X served.

export type Version = readonly [number, number, number];

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

/** Parses `1.6`, `v6.5.0`, `17.1.4+rev2` into a triple; null when it is no version. */
export function parseVersion(text: string): Version | null {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(text.trim());
  if (!match) return null;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

export function hasFeature(version: Version, feature: Feature): boolean {
  return compareVersions(version, parseVersion(FEATURE_SINCE[feature]) as Version) >= 0;
}
