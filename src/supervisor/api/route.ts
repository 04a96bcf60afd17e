import type { Device } from "../device.ts";
import type { Journal } from "../journal.ts";
import type { Feature, Version } from "../versions.ts";
import type { ApiRequest, Reply } from "./reply.ts";

export interface Route {
  readonly method: "GET" | "POST" | "PATCH";
  /** Segments starting with `:` are parameters: `/v1/apps/:appId/stop`. */
  readonly path: string;
  /** The part of the API the route belongs to; older supervisor versions lack it. */
  readonly feature: Feature;
  /** Only /ping and /v1/healthy answer without a key. */
  readonly open?: boolean;
  /** false: the route reads no body, so a malformed one is ignored (/ping, /v1/blink). */
  readonly readsBody?: false;
  readonly handle: (request: ApiRequest) => Reply | Promise<Reply>;
}

/** What the routes act on. */
export interface ApiDeps {
  readonly device: Device;
  /** Looks for a new target now (/v1/update); `force` overrides the update lock. */
  readonly checkForUpdate: (force: boolean) => void;
  readonly healthy: () => boolean;
  /** The supervisor version served: some behaviour inside a route changed between versions. */
  readonly version: Version;
  /** What POST /v2/journal-logs reads. */
  readonly journal: Journal;
  /** The device type slug (/v2/local/device-info). */
  readonly deviceType: string;
  /** Absent when unmanaged: no cloud to ask for tags or to be connected to. */
  readonly cloud?: {
    readonly tags: () => Promise<readonly { id: number; name: string; value: string }[]>;
    readonly connected: () => boolean;
  };
}

export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  // express' default router: a trailing slash is allowed and literal segments ignore case.
  const segments = (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.path.split("/");
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, index) => {
      const segment = segments[index] ?? "";
      if (part.startsWith(":")) {
        params[part.slice(1)] = safeDecode(segment);
        return segment !== "";
      }
      return part.toLowerCase() === segment.toLowerCase();
    });
    if (matches) return { route, params };
  }
  return undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
