import { HostConfigError, parseHostConfigPatch } from "../host-config.ts";
import { UpdatesLockedError } from "../lock.ts";
import { hasFeature } from "../versions.ts";
import { isTruthy, json, text } from "./reply.ts";
import type { ApiDeps, Route } from "./route.ts";

// /v1/device/host-config answers its errors in text, unlike the rest of the API.
export function hostConfigRoutes({ device, version }: ApiDeps): Route[] {
  const dns = hasFeature(version, "proxyDns");
  return [
    {
      method: "GET",
      path: "/v1/device/host-config",
      feature: "hostConfig",
      handle: () => json(200, device.hostConfig()),
    },
    {
      method: "PATCH",
      path: "/v1/device/host-config",
      feature: "hostConfig",
      handle: (request) => {
        try {
          device.patchHostConfig(parseHostConfigPatch(request.body, { dns }), isTruthy(request.body.force));
          return text(200, "OK");
        } catch (error) {
          if (error instanceof HostConfigError) return text(400, error.message);
          if (error instanceof UpdatesLockedError) return text(423, error.message);
          return text(503, (error as Error).message);
        }
      },
    },
  ];
}
