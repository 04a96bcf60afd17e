import { RowNotFound } from "../core/writable-row.ts";
import { FleetgateError, Forbidden, Unauthorized } from "../errors.ts";

/**
 * The accounts surface's answer to a refusal, as open-balena-api's: a fleet or device a key is asked
 * for that the caller may only read is 401 "Unauthorized"; one they cannot see, or that does not
 * exist, is this 500 (src/features/api-keys/lib.ts there), which balena-sdk turns into "Application
 * not found" / "Device not found" (`isNoApplicationForKeyResponse`, `isNoDeviceForKeyResponse`).
 */
export function accountRefusals(refusal: FleetgateError): FleetgateError {
  if (refusal instanceof RowNotFound)
    return new FleetgateError(`No ${refusal.table} found to associate with the api key`, 500, "NOT_FOUND");
  return refusal instanceof Forbidden ? new Unauthorized() : refusal;
}
