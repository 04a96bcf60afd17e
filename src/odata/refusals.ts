import type { FastifyRequest } from "fastify";
import { type FleetgateError, Forbidden, Unauthorized } from "../errors.ts";
import { formatInUrl, rootOf, wantsV4 } from "./negotiation.ts";

/**
 * The OData surface's answer to a refusal: pinejs answers a write the caller may not make with 401
 * "Unauthorized", and its clients rely on it; a client that negotiated OData v4 gets the standard
 * 403 with the reason.
 */
export function odataRefusals(refusal: FleetgateError, request: FastifyRequest): FleetgateError {
  if (!(refusal instanceof Forbidden)) return refusal;
  return wantsV4(rootOf(request.url), request.headers, formatInUrl(request.url))
    ? refusal
    : new Unauthorized();
}
