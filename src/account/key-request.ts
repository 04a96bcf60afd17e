import type { FastifyReply } from "fastify";
import { BadRequest } from "../errors.ts";

// What a request for an API key says (its body), and how the key is answered.

export type Body = Record<string, unknown>;

export function bodyObject(body: unknown): Body {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new BadRequest("The body must be a JSON object");
  return body as Body;
}

export function optionalText(body: Body, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new BadRequest(`'${name}' must be a string`);
  return value;
}

export function expiryDate(body: Body): string | null {
  const value = optionalText(body, "expiryDate");
  if (value === null) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new BadRequest("'expiryDate' must be an ISO 8601 date-time");
  return date.toISOString();
}

/** A new key, as balena answers it: a JSON string. */
export function sendKey(reply: FastifyReply, key: string): FastifyReply {
  return reply.type("application/json").send(JSON.stringify(key));
}
