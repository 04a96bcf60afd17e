import type { Device } from "../device.ts";
import { hasFeature } from "../versions.ts";
import { type ApiRequest, failed, isTruthy, json, type Reply, text, toAppId } from "./reply.ts";
import type { ApiDeps, Route } from "./route.ts";

// The v2 application endpoints, as balena-supervisor's device-api/v2.ts and actions.ts answer
// them: JSON refusals for a bad or out-of-scope app id, text for the rest, `OK` on success.

const APP_NOT_FOUND =
  "App not found: an app needs to be installed for this endpoint to work.\n" +
  "\tIf you've recently moved this device from another app,\n" +
  "\tplease push an app and wait for it to be installed first.";
const SERVICE_NOT_FOUND = "Service not found, a container must exist for this endpoint to work";
const NO_SERVICE_GIVEN =
  "serviceName or imageId parameters were not provided or the app is multi-container. " +
  "Use the v2 service action endpoints.";

type ServiceAction = "restart" | "stop" | "start";

function serviceAction(deps: ApiDeps, action: ServiceAction) {
  const { device } = deps;
  // serviceName came with 8.2.2; before, only imageId names the service.
  const byName = hasFeature(deps.version, "v2ServiceName");
  return async (request: ApiRequest): Promise<Reply> => {
    const appId = toAppId(request.params.appId);
    if (appId === null) return failed(400, "Invalid app id");
    if (appId !== device.app.appId) return failed(401, "Unauthorized");
    const imageId = toAppId(request.body.imageId);
    const name = request.body.serviceName;
    const serviceName =
      byName && typeof name === "string" && !["", "null", "undefined"].includes(name) ? name : null;
    if (serviceName === null && imageId === null) return text(400, NO_SERVICE_GIVEN);
    if (!device.installed) return text(404, APP_NOT_FOUND);
    // The one service this simulation runs is `main`, with the release's image id.
    const found = serviceName === "main" || (imageId !== null && imageId === device.imageId());
    if (!found) return text(404, SERVICE_NOT_FOUND);
    // The lock is taken (423 through the error middleware) unless forced, for every action.
    const force = isTruthy(request.body.force);
    if (action === "stop") await device.app.stop(force);
    else if (action === "start") await device.app.startLocked(force);
    else await device.app.restart(force);
    return text(200, "OK");
  };
}

function appAction(device: Device, act: (force: boolean) => Promise<void>) {
  return async (request: ApiRequest): Promise<Reply> => {
    const appId = toAppId(request.params.appId);
    if (appId === null) return failed(400, "Missing app id");
    if (appId !== device.app.appId) return failed(401, "Unauthorized");
    // doRestart / doPurge: an app that is not running anything is not in the current state (503).
    if (device.app.services === 0)
      throw new Error(`Application with ID ${appId} is not in the current state`);
    await act(isTruthy(request.body.force));
    return text(200, "OK");
  };
}

export function v2AppRoutes(deps: ApiDeps): Route[] {
  const { device } = deps;
  const post = (path: string, handle: Route["handle"]): Route => ({
    method: "POST",
    path,
    feature: "v2Actions",
    handle,
  });
  return [
    post("/v2/applications/:appId/restart-service", serviceAction(deps, "restart")),
    post("/v2/applications/:appId/stop-service", serviceAction(deps, "stop")),
    post("/v2/applications/:appId/start-service", serviceAction(deps, "start")),
    post(
      "/v2/applications/:appId/purge",
      appAction(device, (force) => device.app.purge(force)),
    ),
    post(
      "/v2/applications/:appId/restart",
      appAction(device, (force) => device.app.restart(force)),
    ),
    {
      method: "GET",
      path: "/v2/applications/state",
      feature: "v2AppState",
      // Keyed by app name, each service by name, with the image's status while it downloads.
      handle: () => {
        if (!device.installed) return json(200, {});
        return json(200, {
          [device.appName]: {
            appId: device.app.appId,
            commit: device.commit,
            services: {
              main: {
                status: device.serviceStatus(),
                releaseId: device.releaseId(),
                downloadProgress: device.updater.downloadProgress,
              },
            },
          },
        });
      },
    },
    {
      method: "GET",
      path: "/v2/applications/:appId/state",
      feature: "v2AppState",
      handle: (request) => {
        const appId = toAppId(request.params.appId);
        if (appId === null) return failed(400, `Invalid application ID: ${request.params.appId}`);
        // Missing and out of scope answer alike: 409.
        if (appId !== device.app.appId || !device.installed) {
          return failed(409, `Application ID does not exist: ${appId}`);
        }
        return json(200, {
          commit: device.commit,
          local: {
            [appId]: {
              services: {
                [String(device.imageId())]: {
                  status: device.serviceStatus(),
                  releaseId: device.releaseId(),
                  download_progress: device.updater.downloadProgress,
                },
              },
            },
          },
          dependent: {},
        });
      },
    },
  ];
}
