import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Application, MAIN_SERVICE } from "./application.ts";
import { applyHostConfigPatch, type HostConfig, type HostConfigPatch } from "./host-config.ts";
import { LOCK_FILE, takeLock } from "./lock.ts";
import { type Persisted, savePersisted } from "./store.ts";
import { ipAddresses, macAddress, OS_VARIANT, OS_VERSION } from "./system-info.ts";
import { sleep, type Timings } from "./timings.ts";
import { Updater } from "./updater.ts";

// One simulated device: its persisted identity and settings, its application, its
// update cycle and its LED. The HTTP API and the cloud client only talk to this class.

// `exited`: the real /v1/device reports the status of the application's container once it
// has been stopped (POST /v1/apps/:appId/stop), not Idle.
export type DeviceStatus = "Idle" | "Stopping" | "Starting" | "Downloading" | "Installing" | "exited";

/** GET /v1/device, plus `blinking` (a fleetgate addition: the LED is otherwise invisible). */
export interface DeviceState {
  readonly api_port: number;
  readonly commit: string | null;
  readonly ip_address: string;
  readonly mac_address: string | null;
  /** Absent with no application installed, as the real one leaves them out. */
  readonly status?: DeviceStatus;
  readonly download_progress?: number | null;
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
      onStarted: () => this.writeAppEnv(),
      ...(options.persisted.containerId !== undefined && { containerId: options.persisted.containerId }),
      ...(options.persisted.containerCreatedAt !== undefined && {
        createdAt: options.persisted.containerCreatedAt,
      }),
      onNewContainer: (containerId, containerCreatedAt) => this.save({ containerId, containerCreatedAt }),
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

  get supervisorVersion(): string {
    return this.options.supervisorVersion;
  }

  get dataDir(): string {
    return this.options.dataDir;
  }

  /**
   * The device's name (/v2/device/name). The real one reports the cloud's device_name; the
   * state endpoint read here does not carry it, so the name is the one the cloud gives a
   * device registered without one: the uuid's first 7 characters.
   */
  get deviceName(): string {
    return this.uuid.slice(0, 7);
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
      ...(app.services > 0 && {
        // An application action shows first; a download runs beside a running application.
        status: app.phase ?? (updater.downloading ? "Downloading" : app.running ? "Idle" : "exited"),
        download_progress: updater.downloadProgress,
      }),
      os_version: OS_VERSION,
      os_variant: OS_VARIANT,
      supervisor_version: this.options.supervisorVersion,
      update_pending: updater.pending,
      update_downloaded: updater.downloaded,
      update_failed: updater.failed,
      blinking: Date.now() < this.blinkUntil,
    };
  }

  /** A release runs: a managed device without one has no containers for the v2 API to show. */
  get installed(): boolean {
    return this.app.services > 0 && this.persisted.commit !== null;
  }

  /** The application's name in the v2 answers; the cloud's fleet name is not in the target we read. */
  get appName(): string {
    return `app${this.app.appId}`;
  }

  /** The service's status as the engine reports it (v2): Running, exited, or the step under way. */
  serviceStatus(): string {
    const { app, updater } = this;
    if (app.phase) return app.phase;
    if (updater.downloading) return "Downloading";
    return app.running ? "Running" : "exited";
  }

  /** Whether an update is being applied: /v2/state/status' appState. */
  get applying(): boolean {
    return this.updater.pending || this.app.phase !== null;
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
    // A patch that leaves no whole proxy is a 400 before the lock is looked at.
    const hostConfig = applyHostConfigPatch(this.persisted.hostConfig, patch, this.uuid);
    // Changing the network may cut the application off: the real supervisor takes the lock.
    takeLock(this.options.dataDir, force, this.app.appId, MAIN_SERVICE);
    this.save({ hostConfig });
  }

  setTarget(commit: string | null, force: boolean): void {
    this.updater.setTarget(commit, force);
  }

  /** The environment the application runs with. */
  appEnv(): Record<string, string> {
    // The real supervisor's service defaults name the app, its service and the lock path
    // (compose/service.ts: <PREFIX>_APP_ID, _SERVICE_NAME, _APP_LOCK_PATH, _DEVICE_UUID).
    return {
      PLATFORM_APP_ID: String(this.app.appId),
      PLATFORM_APP_LOCK_PATH: join(this.options.dataDir, LOCK_FILE),
      PLATFORM_SERVICE_NAME: MAIN_SERVICE,
      PLATFORM_DEVICE_UUID: this.uuid,
      PLATFORM_SUPERVISOR_ADDRESS: `http://${this.options.advertisedHost}:${this.port}`,
      PLATFORM_SUPERVISOR_API_KEY: this.app.heldApiKey,
      PLATFORM_SUPERVISOR_PORT: String(this.port),
    };
  }

  /**
   * Writes the environment the application runs with to `apps/<appId>/env.json`, as a container
   * engine keeps a container's: the one place its supervisor key can be seen, since the API leaves
   * it out. Written once the API listens, and on every start of the application.
   */
  writeAppEnv(): void {
    if (this.port === 0) return;
    const folder = join(this.options.dataDir, "apps", String(this.app.appId));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "env.json"), `${JSON.stringify(this.appEnv(), null, 2)}\n`, { mode: 0o600 });
  }

  /** A stable image id per release, as the cloud would hand out. */
  imageId(): number | null {
    return this.idFor("image");
  }

  /** A stable release id per commit (the cloud's release row id is not in the target we read). */
  releaseId(): number | null {
    return this.idFor("release");
  }

  /** The image's name, what the real v1 app answer calls `imageId`: a registry reference. */
  imageName(): string | null {
    const { commit } = this.persisted;
    if (commit === null) return null;
    const digest = createHash("sha256").update(`image:${commit}`).digest("hex");
    return `registry.fleetgate.local/v2/${digest.slice(0, 32)}@sha256:${digest}`;
  }

  private idFor(kind: string): number | null {
    const { commit } = this.persisted;
    if (commit === null) return null;
    const hex = createHash("sha256")
      .update(kind === "image" ? commit : `${kind}:${commit}`)
      .digest("hex");
    return Number.parseInt(hex.slice(0, 7), 16);
  }

  save(changes: Partial<Persisted>): void {
    this.persisted = { ...this.persisted, ...changes };
    savePersisted(this.options.dataDir, this.persisted);
  }

  private emit(kind: ChangeKind): void {
    for (const listener of this.listeners) listener(kind);
  }
}
