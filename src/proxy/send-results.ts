import type { FastifyReply } from "fastify";
import type { DeviceResult } from "./types.ts";

/** A command's answer: one device's relayed as it is, several as 207 with each device's. */
export function sendResults(reply: FastifyReply, results: readonly DeviceResult[]): FastifyReply {
  if (results.length === 1) {
    const [only] = results;
    if (!only) throw new Error("no result");
    // One device: its answer relayed as it is (or the gateway's word when it could not answer).
    if (only.error)
      return reply.code(only.statusCode).type("application/json").send(JSON.stringify(only.error));
    reply.code(only.statusCode);
    if (only.body === null) return reply.send();
    // Text goes out as plain text whatever the device said, so a device cannot serve HTML from our origin.
    if (typeof only.body === "string") return reply.type("text/plain; charset=utf-8").send(only.body);
    return reply.type("application/json").send(JSON.stringify(only.body));
  }
  return reply
    .code(207)
    .type("application/json")
    .send(
      JSON.stringify(
        results.map(({ deviceId, uuid, statusCode, body: answer, error }) => ({
          deviceId,
          uuid,
          statusCode,
          body: answer,
          ...(error ? { error } : {}),
        })),
      ),
    );
}
