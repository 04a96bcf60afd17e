import type { Device } from "../device.ts";
import type { Feature } from "../versions.ts";
import type { ApiRequest, Reply } from "./reply.ts";

export interface Route {
  readonly method: "GET" | "POST" | "PATCH";
  /** Segments starting with `:` are parameters: `/v1/apps/:appId/stop`. */
  readonly path: string;
  /** The part of the API the route belongs to; older supervisor versions lack it. */
  readonly feature: Feature;
  /** Only /ping and /v1/healthy answer without a key. */
  readonly open?: boolean;
  readonly handle: (request: ApiRequest) => Reply | Promise<Reply>;
}

/** What the routes act on. */
export interface ApiDeps {
  readonly device: Device;
  /** Looks for a new target now (/v1/update); `force` overrides the update lock. */
  readonly checkForUpdate: (force: boolean) => void;
  readonly healthy: () => boolean;
}

export function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  const segments = path.split("/");
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
      return part === segment;
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
