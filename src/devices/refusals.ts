import { RowNotFound } from "../core/writable-row.ts";
import { type FleetgateError, Forbidden, Unauthorized } from "../errors.ts";

/**
 * The device API's answer to a refusal, as open-balena-api's: 401 "Unauthorized" for a fleet a
 * registration may not create a device in, whether the caller cannot see it (or it does not exist)
 * or may only read it.
 */
export function deviceRefusals(refusal: FleetgateError): FleetgateError {
  return refusal instanceof RowNotFound || refusal instanceof Forbidden ? new Unauthorized() : refusal;
}
