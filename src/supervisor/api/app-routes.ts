import type { Device } from "../device.ts";
import { type ApiRequest, failed, isTruthy, json, type Reply, text, toAppId } from "./reply.ts";
import type { ApiDeps, Route } from "./route.ts";

// The endpoints that act on the application. The device's API key is scoped to its one
// application, so another app id is refused the way the real supervisor refuses an
// out-of-scope key; each endpoint has its own wording for that.

const APP_NOT_FOUND =
  "App not found: an app needs to be installed for this endpoint to work.\n" +
  "\tIf you've recently moved this device from another app,\n" +
  "\tplease push an app and wait for it to be installed first.";
const MULTI_CONTAINER =
  "serviceName or imageId parameters were not provided or the app is multi-container. " +
  "Use the v2 service action endpoints.";

// balena-supervisor's constants.privateAppEnvVars: the application holds these keys in its
// environment, but GET /v1/apps/:appId leaves every *_SUPERVISOR_API_KEY and *_API_KEY out, so
// whoever may read the device's answer (through the cloud's proxy) does not learn them.
const privateEnvName = /_(?:SUPERVISOR_)?API_KEY$/;

function publicEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !privateEnvName.test(name)));
}

function serviceAction(device: Device, action: "stop" | "start") {
  return async (request: ApiRequest): Promise<Reply> => {
    const appId = toAppId(request.params.appId);
    if (appId === null) return text(400, "Invalid app id");
    if (appId !== device.app.appId) return text(401, "Unauthorized");
    if (device.app.services === 0) return text(400, APP_NOT_FOUND);
    if (device.app.services > 1) return text(400, MULTI_CONTAINER);
    // A stop is refused while the lock is held (423 via the error middleware); a start takes no lock.
    if (action === "stop") await device.app.stop(isTruthy(request.body.force));
    else await device.app.start();
    return json(200, { containerId: device.app.containerId });
  };
}

export function appRoutes({ device }: ApiDeps): Route[] {
  const inScope = (appId: number) => appId === device.app.appId;
  return [
    {
      method: "POST",
      path: "/v1/restart",
      feature: "api",
      handle: async (request) => {
        const appId = toAppId(request.body.appId);
        if (appId === null) return text(400, "Missing app id");
        if (!inScope(appId)) return failed(401, "Unauthorized");
        await device.app.restart(isTruthy(request.body.force));
        return text(200, "OK");
      },
    },
    {
      method: "POST",
      path: "/v1/purge",
      feature: "api",
      handle: async (request) => {
        const appId = toAppId(request.body.appId);
        if (appId === null) return text(400, "Invalid or missing appId");
        if (!inScope(appId)) return failed(401, "Unauthorized");
        await device.app.purge(isTruthy(request.body.force));
        return json(200, { Data: "OK", Error: "" });
      },
    },
    { method: "POST", path: "/v1/apps/:appId/stop", feature: "apps", handle: serviceAction(device, "stop") },
    {
      method: "POST",
      path: "/v1/apps/:appId/start",
      feature: "apps",
      handle: serviceAction(device, "start"),
    },
    {
      method: "GET",
      path: "/v1/apps/:appId",
      feature: "apps",
      // The real GET checks in this order and words its refusals differently from stop/start.
      handle: (request) => {
        const appId = toAppId(request.params.appId);
        if (appId === null) return text(400, "Missing app id");
        if (!inScope(appId) || device.app.services === 0) return text(400, "App not found");
        if (device.app.services > 1) {
          return text(400, "Some v1 endpoints are only allowed on single-container apps");
        }
        // Exactly the real answer's members (device-api/v1.ts): imageId is the image's name (a
        // string), and there is a releaseId. Whether the container runs is /v1/device's status.
        return json(200, {
          appId,
          commit: device.commit,
          containerId: device.app.containerId,
          env: publicEnv(device.appEnv()),
          imageId: device.imageName(),
          releaseId: device.releaseId(),
        });
      },
    },
  ];
}
