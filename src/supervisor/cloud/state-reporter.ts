import type { Device } from "../device.ts";
import { metrics } from "../system-info.ts";
import { isAbort, sleep } from "../timings.ts";
import type { CloudClient, StateReport } from "./cloud-client.ts";

// Reports the device's state to the cloud: at start, after each change (debounced, so a
// download reports a few steps rather than every one), at once when the API key changes,
// and as a heartbeat so the cloud knows the device is online.

const DEBOUNCE_MS = 200;

export type StateApi = "v2" | "v3";

export interface StateReporterOptions {
  readonly client: CloudClient;
  readonly device: Device;
  readonly deviceKey: string;
  readonly supervisorAddress: string;
  readonly dataDir: string;
  readonly heartbeatMs: number;
  /** v3 (PATCH /device/v3/state, the default, as v17 reports) or v2 (PATCH /device/v2/<uuid>/state). */
  readonly stateApi: StateApi;
  /** The fleet's uuid once the target has named it; a v3 report needs it to name the commit. */
  readonly appUuid: () => string | undefined;
  readonly signal: AbortSignal;
  readonly log: (message: string) => void;
}

export class StateReporter {
  private lastSuccess = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private again = false;

  constructor(private readonly options: StateReporterOptions) {}

  start(): void {
    const { device, heartbeatMs, signal } = this.options;
    device.onChange((kind) => (kind === "key" ? this.reportNow() : this.schedule()));
    signal.addEventListener("abort", () => clearTimeout(this.timer));
    const heartbeat = async () => {
      for (;;) {
        this.reportNow();
        await sleep(heartbeatMs, signal);
      }
    };
    heartbeat().catch((error) => {
      if (!isAbort(error)) this.options.log(`heartbeat stopped: ${(error as Error).message}`);
    });
  }

  /** Something the report carries changed outside the device (the fleet's uuid): report soon. */
  changed(): void {
    this.schedule();
  }

  /** Unhealthy once three heartbeats in a row have failed. */
  healthy(): boolean {
    return Date.now() - this.lastSuccess < 3 * this.options.heartbeatMs + 1000;
  }

  report(): StateReport {
    const { device, supervisorAddress, dataDir } = this.options;
    const state = device.state();
    return {
      status: state.status,
      commit: state.commit,
      ip_address: state.ip_address,
      supervisor_address: supervisorAddress,
      api_port: state.api_port,
      api_key: device.apiKey,
      os_version: state.os_version,
      os_variant: state.os_variant,
      supervisor_version: state.supervisor_version,
      download_progress: state.download_progress,
      provisioning_progress: null,
      ...metrics(dataDir),
    };
  }

  private schedule(): void {
    if (this.timer || this.options.signal.aborted) return;
    this.timer = setTimeout(() => this.reportNow(), DEBOUNCE_MS);
  }

  private reportNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.options.signal.aborted) return;
    // One report at a time; a change during it is sent right after, with the newest state.
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    const { client, device, deviceKey, stateApi } = this.options;
    const report = this.report();
    (stateApi === "v3"
      ? client.reportStateV3(device.uuid, deviceKey, report, this.options.appUuid())
      : client.reportState(device.uuid, deviceKey, report)
    )
      .then(() => {
        this.lastSuccess = Date.now();
      })
      .catch((error) => this.options.log(`state report failed: ${(error as Error).message}`))
      .finally(() => {
        this.inFlight = false;
        if (this.again) {
          this.again = false;
          this.reportNow();
        }
      });
  }
}
