import { createHash, randomBytes } from "node:crypto";
import { Application } from "./application.ts";
import { applyHostConfigPatch, type HostConfig, type HostConfigPatch } from "./host-config.ts";
import { isLocked, UpdatesLockedError } from "./lock.ts";
import { type Persisted, savePersisted } from "./store.ts";
import { ipAddresses, macAddress, OS_VARIANT, OS_VERSION } from "./system-info.ts";
import { sleep, type Timings } from "./timings.ts";
import { Updater } from "./updater.ts";

// One simulated device: its persisted identity and settings, its application, its
// update cycle and its LED. The HTTP API and the cloud client only talk to this class.

export type DeviceStatus = "Idle" | "Stopping" | "Starting" | "Downloading" | "Installing";

/** GET /v1/device, plus `blinking` (a fleetgate addition: the LED is otherwise invisible). */
export interface DeviceState {
  readonly api_port: number;
  readonly commit: string | null;
  readonly ip_address: string;
  readonly mac_address: string | null;
  readonly status: DeviceStatus;
  readonly download_progress: number | null;
  readonly os_version: string;
  readonly os_variant: string;
  readonly supervisor_version: string;
  readonly update_pending: boolean;
  readonly update_downloaded: boolean;
  readonly update_failed: boolean;
  readonly blinking: boolean;
}

/** "key" changes are reported to the cloud at once; "state" changes are debounced. */
export type ChangeKind = "state" | "key";

export interface DeviceOptions {
  readonly dataDir: string;
  readonly persisted: Persisted;
  readonly appId: number;
  readonly services: number;
  readonly timings: Timings;
  readonly signal: AbortSignal;
  readonly supervisorVersion: string;
  /** The address the application reaches the supervisor at. */
  readonly advertisedHost: string;
  readonly log: (message: string) => void;
  /** Called once the application has stopped after /v1/shutdown. */
  readonly onShutdown: () => void;
}

export const newApiKey = () => randomBytes(16).toString("hex");

export class Device {
  port = 0;
  readonly app: Application;
  readonly updater: Updater;
  private persisted: Persisted;
  private blinkUntil = 0;
  private readonly listeners: ((kind: ChangeKind) => void)[] = [];

  constructor(private readonly options: DeviceOptions) {
    this.persisted = options.persisted;
    const onChange = () => this.emit("state");
    this.app = new Application({
      appId: options.appId,
      services: options.services,
      dataDir: options.dataDir,
      timings: options.timings,
      signal: options.signal,
      currentApiKey: () => this.apiKey,
      onChange,
    });
    this.updater = new Updater({
      app: this.app,
      dataDir: options.dataDir,
      timings: options.timings,
      signal: options.signal,
      currentCommit: () => this.persisted.commit,
      setCommit: (commit) => this.save({ commit }),
      onChange,
      log: options.log,
    });
  }

  get uuid(): string {
    return this.persisted.uuid;
  }

  get apiKey(): string {
    return this.persisted.apiKey;
  }

  get commit(): string | null {
    return this.persisted.commit;
  }

  onChange(listener: (kind: ChangeKind) => void): void {
    this.listeners.push(listener);
  }

  state(): DeviceState {
    const { app, updater } = this;
    return {
      api_port: this.port,
      commit: this.persisted.commit,
      ip_address: ipAddresses(),
      mac_address: macAddress(),
      // An application action shows first; a download runs beside a running application.
      status: app.phase ?? (updater.downloading ? "Downloading" : "Idle"),
      download_progress: updater.downloadProgress,
      os_version: OS_VERSION,
      os_variant: OS_VARIANT,
      supervisor_version: this.options.supervisorVersion,
      update_pending: updater.pending,
      update_downloaded: updater.downloaded,
      update_failed: updater.failed,
      blinking: Date.now() < this.blinkUntil,
    };
  }

  blink(): void {
    this.blinkUntil = Date.now() + this.options.timings.blinkMs;
  }

  /** The old key stops working at once; the application learns the new one when it next starts. */
  regenerateApiKey(): string {
    this.save({ apiKey: newApiKey() });
    this.emit("key");
    return this.apiKey;
  }

  /** Resolves once the application has stopped; the device then comes back up. */
  async reboot(force: boolean): Promise<void> {
    await this.app.stop(force);
    void sleep(this.options.timings.stepMs, this.options.signal)
      .then(() => this.app.boot())
      .catch(() => {});
  }

  async shutdown(force: boolean): Promise<void> {
    await this.app.stop(force);
    // After the reply is on its way: the device is gone from then on.
    setTimeout(this.options.onShutdown, 50);
  }

  hostConfig(): HostConfig {
    return this.persisted.hostConfig;
  }

  patchHostConfig(patch: HostConfigPatch, force: boolean): void {
    // Changing the network may cut the application off: the real supervisor takes the lock.
    if (!force && isLocked(this.options.dataDir)) throw new UpdatesLockedError(this.app.appId, "main");
    this.save({ hostConfig: applyHostConfigPatch(this.persisted.hostConfig, patch, this.uuid) });
  }

  setTarget(commit: string | null, force: boolean): void {
    this.updater.setTarget(commit, force);
  }

  /** The environment the application runs with. */
  appEnv(): Record<string, string> {
    return {
      PLATFORM_APP_ID: String(this.app.appId),
      PLATFORM_DEVICE_UUID: this.uuid,
      PLATFORM_SUPERVISOR_ADDRESS: `http://${this.options.advertisedHost}:${this.port}`,
      PLATFORM_SUPERVISOR_API_KEY: this.app.heldApiKey,
      PLATFORM_SUPERVISOR_PORT: String(this.port),
    };
  }

  /** A stable image id per release, as the cloud would hand out. */
  imageId(): number | null {
    const { commit } = this.persisted;
    return commit === null
      ? null
      : Number.parseInt(createHash("sha256").update(commit).digest("hex").slice(0, 7), 16);
  }

  save(changes: Partial<Persisted>): void {
    this.persisted = { ...this.persisted, ...changes };
    savePersisted(this.options.dataDir, this.persisted);
  }

  private emit(kind: ChangeKind): void {
    for (const listener of this.listeners) listener(kind);
  }
}
