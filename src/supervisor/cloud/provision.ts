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

/** Retries while the cloud is unreachable or failing; a refusal (4xx) ends it at once. */
async function retrying<T>(options: ProvisionOptions, work: () => Promise<T>): Promise<T> {
  for (let wait = 500; ; wait = Math.min(wait * 2, 10_000)) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof CloudError) || !error.transient) throw error;
      options.log(`registration failed, retrying in ${wait} ms: ${error.message}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
      options.signal.throwIfAborted();
    }
  }
}
