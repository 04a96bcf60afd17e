import pRetry from "p-retry";
import type { Persisted } from "../store.ts";
import { type CloudClient, CloudError } from "./cloud-client.ts";

// Registration of a new device, once: afterwards the data dir holds the device's id and
// cloud key and a restart reuses them.

export interface ProvisionOptions {
  readonly api: string;
  readonly fleet: number;
  readonly provisioningKey?: string;
  /** A user's session token or API key, to create a provisioning key with. */
  readonly token?: string;
  readonly deviceType?: string;
  readonly signal: AbortSignal;
  readonly log: (message: string) => void;
}

export type CloudCredentials = NonNullable<Persisted["cloud"]>;

export async function provision(
  client: CloudClient,
  uuid: string,
  known: CloudCredentials | undefined,
  options: ProvisionOptions,
): Promise<CloudCredentials> {
  if (known) {
    if (known.api !== options.api || known.fleet !== options.fleet) {
      throw new Error(
        `this data dir belongs to device ${known.deviceId} of fleet ${known.fleet} at ${known.api}; ` +
          "use another --data-dir for another registration",
      );
    }
    return known;
  }
  return retrying(options, async () => {
    const provisioningKey =
      options.provisioningKey ?? (await client.createProvisioningKey(options.token ?? "", options.fleet));
    const registration = await client.register(provisioningKey, {
      application: options.fleet,
      uuid,
      ...(options.deviceType && { device_type: options.deviceType }),
    });
    return {
      api: options.api,
      fleet: options.fleet,
      deviceId: registration.id,
      deviceKey: registration.api_key,
    };
  });
}

// The wait before the first retry, doubled after each one up to the last.
const FIRST_WAIT_MS = 500;
const LAST_WAIT_MS = 10_000;

/**
 * Retries while the cloud is unreachable or failing (p-retry); a refusal (4xx) ends it at once, and
 * so does the supervisor stopping.
 */
function retrying<T>(options: ProvisionOptions, work: () => Promise<T>): Promise<T> {
  return pRetry(work, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: FIRST_WAIT_MS,
    maxTimeout: LAST_WAIT_MS,
    factor: 2,
    signal: options.signal,
    shouldRetry: ({ error, retriesConsumed }) => {
      if (!(error instanceof CloudError) || !error.transient) return false;
      const wait = Math.min(FIRST_WAIT_MS * 2 ** retriesConsumed, LAST_WAIT_MS);
      options.log(`registration failed, retrying in ${wait} ms: ${error.message}`);
      return true;
    },
  });
}
