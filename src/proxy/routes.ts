import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { asWriter, requestContext } from "../auth/request-context.ts";
import { BadRequest } from "../errors.ts";
import { type Sender, sendCommand, senderOf } from "./send-command.ts";
import { sendResults } from "./send-results.ts";
import type { CommandDeps, ProxyInput } from "./types.ts";

/** RFC 7240: `Prefer: respond-async` asks for 202 and a job instead of waiting for every device. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) =>
    value.split(",").some((preference) => preference.split(";")[0]?.trim().toLowerCase() === "respond-async"),
  );
}

/** The sender of a command over HTTP: the request's caller, who must be a user. */
export function httpSender(request: FastifyRequest): Sender {
  return senderOf(asWriter(requestContext(request)));
}

/** `POST /supervisor/<path>`: the HTTP shell around sendCommand. */
export function proxyRoutes(app: FastifyInstance, deps: CommandDeps): void {
  app.post("/supervisor/*", async (request: FastifyRequest, reply: FastifyReply) => {
    const sender = httpSender(request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body !== "object" || Array.isArray(body))
      throw new BadRequest("The body must be a JSON object");
    const path = (request.url.split("?")[0] ?? "").slice("/supervisor".length);
    const input: ProxyInput = { ...body, path };
    const delivery = {
      async: prefersAsync(request.headers.prefer),
      idempotencyKey: request.headers["idempotency-key"],
    };
    const sent = await sendCommand(sender, input, delivery, deps);
    if ("results" in sent) return sendResults(reply, sent.results);
    return reply
      .code(202)
      .header("Location", `/v6/command_job(${sent.job.id})`)
      .header("Preference-Applied", "respond-async")
      .type("application/json")
      .send(JSON.stringify(sent.job));
  });
}
