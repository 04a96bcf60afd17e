import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { writableRowActor } from "../core/writable-row.ts";
import { BadRequest, NotFound } from "../errors.ts";
import { proxyCommand } from "./command.ts";
import { httpSender } from "./routes.ts";
import { sendResults } from "./send-results.ts";
import type { CommandDeps, DeviceResult } from "./types.ts";

// The restart routes balena-sdk calls outside /supervisor: `POST /application/:id/restart`
// (application.restart, both lines) restarts the application on every online device of the fleet,
// and `POST /device/:id/restart` (19.7.3's device.restartApplication, for a supervisor before
// 7.0.0) on one device. Each is the proxy's `/v1/restart` with the device's own app id, under the
// proxy's rules: a user's credential, devices the caller may write, the audit.
type Target = "application" | "device";

const isOk = (result: DeviceResult) => !result.error && result.statusCode >= 200 && result.statusCode < 300;

export function restartRoutes(app: FastifyInstance, deps: CommandDeps): void {
  const restart =
    (target: Target) => async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      const sender = httpSender(request);
      const id = Number(request.params.id);
      if (!Number.isSafeInteger(id)) throw new BadRequest(`'${target}' id must be an integer`);
      // A fleet or device the caller cannot see, or may not change, is refused (./refusals.ts).
      await writableRowActor({ db: deps.db, model: deps.model, permissions: sender.permissions }, target, id);
      const input = {
        path: "/v1/restart",
        data: {},
        appScoped: true,
        ...(target === "application" ? { appId: id } : { deviceId: id }),
      };
      let results: DeviceResult[];
      try {
        // Answered at once, never as a job: balena-sdk waits for the restart's answer.
        results = await proxyCommand(input, { ...deps, ...sender });
      } catch (error) {
        // A fleet with no device online has nothing to restart; one device offline is the proxy's 404.
        if (target === "application" && error instanceof NotFound) results = [];
        else throw error;
      }
      if (target === "device" || !results.every(isOk)) return sendResults(reply, results);
      return reply.type("text/plain; charset=utf-8").send("OK");
    };
  app.post("/application/:id/restart", restart("application"));
  app.post("/device/:id/restart", restart("device"));
}
