// The supervisor's only view of the cloud: its HTTP API (the device endpoints of
// fleetgate's server). Nothing of the cloud's code is imported, by design.

export class CloudError extends Error {
  constructor(
    message: string,
    /** The HTTP status; undefined when the cloud could not be reached. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "CloudError";
  }

  /** Worth trying again later: the network or the server failed, not our request. */
  get transient(): boolean {
    return this.status === undefined || this.status >= 500 || this.status === 429;
  }
}

export interface Registration {
  readonly id: number;
  readonly uuid: string;
  /** The device's own cloud key, for its state reports and target polls. */
  readonly api_key: string;
}

export interface Target {
  readonly commit: string | null;
  readonly appId: number;
  /** The fleet's uuid, which names it in a v3 state report; older clouds leave it out. */
  readonly appUuid?: string;
}

/** The state report body; every member is optional on the wire. */
export type StateReport = Readonly<Record<string, string | number | boolean | null | undefined>>;

const TIMEOUT_MS = 30_000;

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly etag: string | null;
}

export class CloudClient {
  private readonly api: string;
  /** The last target read per device, with its ETag: the next poll sends it as If-None-Match. */
  private readonly targets = new Map<string, { readonly etag: string; readonly target: Target }>();

  constructor(api: string) {
    this.api = api.replace(/\/+$/, "");
  }

  /** POST /api-key/application/<fleet>/provisioning with a user's token: the key, a JSON string. */
  async createProvisioningKey(token: string, fleet: number): Promise<string> {
    const key = await this.call("POST", `/api-key/application/${fleet}/provisioning`, token, {});
    if (typeof key !== "string") throw new CloudError("the provisioning key is not a JSON string");
    return key;
  }

  async register(
    provisioningKey: string,
    body: { application: number; uuid: string; device_type?: string },
  ): Promise<Registration> {
    const registration = (await this.call("POST", "/device/register", provisioningKey, body)) as Registration;
    if (typeof registration?.api_key !== "string" || typeof registration.id !== "number") {
      throw new CloudError("the registration answer lacks id or api_key");
    }
    return registration;
  }

  async reportState(uuid: string, deviceKey: string, report: StateReport): Promise<void> {
    await this.call("PATCH", `/device/v2/${uuid}/state`, deviceKey, report);
  }

  /**
   * The v17 supervisor's report (PATCH /device/v3/state): keyed by the device's uuid, the key
   * as `api_secret`, the running commit as the fleet's `apps.<app uuid>.release_uuid`.
   */
  async reportStateV3(uuid: string, deviceKey: string, report: StateReport, appUuid?: string): Promise<void> {
    const { api_key, commit, ...fields } = report;
    const body = {
      ...fields,
      ...(api_key !== undefined && { api_secret: api_key }),
      ...(appUuid !== undefined && { apps: { [appUuid]: commit ? { release_uuid: commit } : {} } }),
    };
    await this.call("PATCH", "/device/v3/state", deviceKey, { [uuid]: body });
  }

  /**
   * The device's target. As balena-supervisor polls (device-state/target-state.ts), the ETag of the
   * last answer goes back as If-None-Match, and a 304 means that answer still holds.
   */
  async fetchTarget(uuid: string, deviceKey: string): Promise<Target> {
    const path = `/device/v2/${uuid}/state`;
    const last = this.targets.get(uuid);
    const answer = await this.send("GET", path, deviceKey, undefined, last?.etag);
    if (answer.status === 304 && last) return last.target;
    const { target } = (parsed(answer, "GET", path) ?? {}) as { target?: Partial<Target> };
    if (!target || (target.commit !== null && typeof target.commit !== "string")) {
      throw new CloudError("the target state lacks target.commit");
    }
    const read: Target = {
      commit: target.commit,
      appId: Number(target.appId),
      ...(typeof target.appUuid === "string" && { appUuid: target.appUuid }),
    };
    if (answer.etag) this.targets.set(uuid, { etag: answer.etag, target: read });
    else this.targets.delete(uuid);
    return read;
  }

  /** The device's tags, as the real supervisor's apiBinder.fetchDeviceTags reads them with its key. */
  async fetchDeviceTags(
    deviceId: number,
    deviceKey: string,
  ): Promise<{ id: number; name: string; value: string }[]> {
    const path = `/v6/device_tag?$select=id,tag_key,value&$filter=device%20eq%20${deviceId}`;
    const answer = (await this.call("GET", path, deviceKey)) as {
      d?: { id: number; tag_key: string; value: string }[];
    };
    if (!Array.isArray(answer?.d)) throw new CloudError("the device tags answer lacks d");
    return answer.d.map((tag) => ({ id: tag.id, name: tag.tag_key, value: tag.value }));
  }

  private async call(method: string, path: string, key: string, body?: object): Promise<unknown> {
    return parsed(await this.send(method, path, key, body), method, path);
  }

  private async send(
    method: string,
    path: string,
    key: string,
    body?: object,
    ifNoneMatch?: string,
  ): Promise<Answer> {
    let response: Response;
    try {
      response = await fetch(`${this.api}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined && { "content-type": "application/json" }),
          ...(ifNoneMatch !== undefined && { "if-none-match": ifNoneMatch }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new CloudError(`${method} ${path}: ${(error as Error).message}`);
    }
    return { status: response.status, text: await response.text(), etag: response.headers.get("etag") };
  }
}

/** A 2xx answer's body: JSON, or its text; any other status is a `CloudError`. */
function parsed(answer: Answer, method: string, path: string): unknown {
  const { status, text } = answer;
  if (status < 200 || status > 299) throw new CloudError(`${method} ${path}: ${status} ${text}`, status);
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // PATCH answers "OK" as text on some servers; only the GETs and POSTs need JSON.
    return text;
  }
}
