import { UpdatesLockedError } from "../lock.ts";
import { type ApiRequest, isTruthy, json, type Reply, text } from "./reply.ts";
import type { ApiDeps, Route } from "./route.ts";

// The device-wide v1 endpoints. Status codes and bodies are the real supervisor's
// (clients-on-the-wire.md, part C), including its inconsistencies between endpoints.

export function deviceRoutes({ device, checkForUpdate, healthy }: ApiDeps): Route[] {
  // reboot and shutdown answer in their own {Data, Error} shape, not the error middleware's.
  const powerAction =
    (act: (force: boolean) => Promise<void>) =>
    async (request: ApiRequest): Promise<Reply> => {
      try {
        await act(isTruthy(request.body.force));
        return json(202, { Data: "OK", Error: null });
      } catch (error) {
        const status = error instanceof UpdatesLockedError ? 423 : 500;
        return json(status, { Data: "", Error: (error as Error).message || "Unknown error" });
      }
    };

  return [
    {
      method: "GET",
      path: "/ping",
      feature: "api",
      open: true,
      readsBody: false,
      handle: () => text(200, "OK"),
    },
    {
      method: "GET",
      path: "/v1/healthy",
      feature: "healthy",
      open: true,
      readsBody: false,
      // The real one answers res.sendStatus(200): the body is the status text, `OK`.
      handle: () => (healthy() ? text(200, "OK") : text(500, "Unhealthy")),
    },
    {
      method: "POST",
      path: "/v1/blink",
      feature: "api",
      readsBody: false,
      handle: () => {
        device.blink();
        return text(200, "OK");
      },
    },
    {
      method: "POST",
      path: "/v1/update",
      feature: "api",
      // Instant updates are always on here, so the answer is always 204; the real one
      // answers 202 `Accepted` when they are off and the update is not forced.
      handle: (request) => {
        checkForUpdate(isTruthy(request.body.force));
        return { status: 204 };
      },
    },
    { method: "POST", path: "/v1/reboot", feature: "api", handle: powerAction((f) => device.reboot(f)) },
    { method: "POST", path: "/v1/shutdown", feature: "api", handle: powerAction((f) => device.shutdown(f)) },
    {
      method: "POST",
      path: "/v1/regenerate-api-key",
      feature: "api",
      handle: () => text(200, device.regenerateApiKey()),
    },
    { method: "GET", path: "/v1/device", feature: "device", handle: () => json(200, device.state()) },
  ];
}
