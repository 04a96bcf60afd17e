import { RowNotWritable } from "../core/writable-row.ts";
import { type FleetgateError, Unauthorized } from "../errors.ts";
import { NotAUser } from "./send-command.ts";

/**
 * The proxy's HTTP routes' answer to a refusal: pinejs's 401 "Unauthorized" to a caller who is not a
 * user and to a fleet or device they may not change (the restart routes); devices they can see but
 * may not command stay a 403 with the reason, and one they cannot see is a 404 (balena-sdk's "not
 * found").
 */
export function proxyRefusals(refusal: FleetgateError): FleetgateError {
  return refusal instanceof NotAUser || refusal instanceof RowNotWritable ? new Unauthorized() : refusal;
}
