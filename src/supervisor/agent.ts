import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { appRoutes } from "./api/app-routes.ts";
import { deviceRoutes } from "./api/device-routes.ts";
import { hostConfigRoutes } from "./api/host-config-routes.ts";
import type { ApiDeps } from "./api/route.ts";
import { createApiServer, type Faults } from "./api/server.ts";
import { v2AppRoutes } from "./api/v2-app-routes.ts";
import { v2DeviceRoutes } from "./api/v2-device-routes.ts";
import { CloudClient } from "./cloud/cloud-client.ts";
import { type CloudCredentials, provision } from "./cloud/provision.ts";
import { type StateApi, StateReporter } from "./cloud/state-reporter.ts";
import { Device, newApiKey } from "./device.ts";
import { defaultHostConfig } from "./host-config.ts";
import { Journal } from "./journal.ts";
import { localTarget } from "./local-target.ts";
import { loadPersisted, type Persisted, savePersisted } from "./store.ts";
import { TargetPoller, type TargetSource } from "./target-poller.ts";
import type { Timings } from "./timings.ts";
import { parseVersion, type Version } from "./versions.ts";

// Puts one device together: identity from the data dir, registration when managed, the
// device API on its port, the target poller and (managed) the state reporter. Nothing
// here touches the process, so `fleetgate fleet` can run many of these in one.

export interface ManagedOptions {
  readonly api: string;
  readonly fleet: number;
  readonly provisioningKey?: string;
  readonly token?: string;
  readonly deviceType?: string;
  readonly heartbeatMs: number;
  /** Which state endpoint reports go to; v3 unless v2 is asked for. */
  readonly stateApi?: StateApi;
}

export interface SupervisorOptions {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  /** Sets the API key for this run; without it the stored (or a new) key is used. */
  readonly apiKey?: string;
  readonly uuid?: string;
  /** The application's id when unmanaged; a managed device runs its fleet's. */
  readonly appId: number;
  readonly services: number;
  readonly supervisorVersion: string;
  readonly timings: Timings;
  readonly pollIntervalMs: number;
  /** Absent: unmanaged, no cloud. */
  readonly managed?: ManagedOptions;
  readonly log: (message: string) => void;
  /** Misbehaviour to inject into the device API (the fleet simulator's fault flags). */
  readonly faults?: Faults;
  /** What /v1/shutdown ends with; by default the supervisor closes. */
  readonly onShutdown?: () => void;
}

export interface RunningSupervisor {
  readonly uuid: string;
  readonly port: number;
  readonly device: Device;
  close(): Promise<void>;
}

// What /v2/local/device-info reports when no --device-type was given.
const DEFAULT_DEVICE_TYPE = "generic-amd64";

const newUuid = () => randomBytes(16).toString("hex");

function identity(options: SupervisorOptions, stored: Persisted | undefined): Persisted {
  if (options.uuid && stored && options.uuid !== stored.uuid) {
    throw new Error(`this data dir belongs to device ${stored.uuid}, not ${options.uuid}`);
  }
  const uuid = options.uuid ?? stored?.uuid ?? newUuid();
  return {
    uuid,
    apiKey: options.apiKey ?? stored?.apiKey ?? newApiKey(),
    // An unmanaged device runs a local release from the start; a managed one waits for its target.
    commit: stored ? stored.commit : options.managed ? null : randomBytes(16).toString("hex"),
    hostConfig: stored?.hostConfig ?? defaultHostConfig(uuid),
    ...(stored?.cloud && { cloud: stored.cloud }),
    ...(stored?.containerId && { containerId: stored.containerId }),
    ...(stored?.containerCreatedAt && { containerCreatedAt: stored.containerCreatedAt }),
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** A managed device's way to the cloud, once it is registered. */
interface CloudLink {
  readonly managed: ManagedOptions;
  readonly client: CloudClient;
  readonly credentials: CloudCredentials;
}

export async function startSupervisor(options: SupervisorOptions): Promise<RunningSupervisor> {
  const version = parseVersion(options.supervisorVersion) as Version;
  const controller = new AbortController();
  const { signal } = controller;
  // Everything the supervisor logs also goes to its (simulated) journal, as on a device.
  let running: Device | undefined;
  const journal = new Journal(() => (running?.hostConfig() ?? persisted.hostConfig).network.hostname);
  const log = (message: string) => {
    journal.record(message);
    options.log(message);
  };
  let persisted = identity(options, loadPersisted(options.dataDir));
  savePersisted(options.dataDir, persisted);
  const link = options.managed && (await register(options.managed, options.dataDir, persisted, signal, log));
  if (link) persisted = link.persisted;

  // The application reaches the supervisor on the loopback when it listens everywhere.
  const advertisedHost = ["0.0.0.0", "::"].includes(options.host) ? "127.0.0.1" : options.host;
  let close: () => Promise<void> = async () => {};
  const device = new Device({
    dataDir: options.dataDir,
    persisted,
    appId: link ? link.managed.fleet : options.appId,
    services: options.services,
    timings: options.timings,
    signal,
    supervisorVersion: options.supervisorVersion,
    advertisedHost,
    log,
    onShutdown: options.onShutdown ?? (() => void close()),
  });
  running = device;

  const target = link && cloudTarget(link, device, () => reporter?.changed());
  const source = target ? target.source : localTarget(options.dataDir);
  const poller = new TargetPoller({ source, device, intervalMs: options.pollIntervalMs, signal, log });
  const reporter =
    link && target && stateReporter(link, { device, advertisedHost, appUuid: target.appUuid, signal, log });
  const deps: ApiDeps = {
    device,
    checkForUpdate: (force) => poller.poll(force),
    healthy: () => poller.healthy() && (reporter?.healthy() ?? true),
    version,
    journal,
    deviceType: options.managed?.deviceType ?? DEFAULT_DEVICE_TYPE,
    ...(link && reporter && { cloud: cloudApi(link, reporter) }),
  };
  const server = apiServer(deps, log, options.faults);
  device.port = await listen(server, options.host, options.port);
  // The application's environment names the port, known only now.
  device.writeAppEnv();
  poller.start();
  // As the real supervisor, report once the target is known: it names the fleet (its uuid) that a
  // v3 report files the running release under. A failed first poll does not hold reports back.
  void poller.settled().then(() => reporter?.start());

  close = closer(controller, server);
  return { uuid: device.uuid, port: device.port, device, close: () => close() };
}

/** Registers the device (or finds it registered) and keeps its credentials with its identity. */
async function register(
  managed: ManagedOptions,
  dataDir: string,
  persisted: Persisted,
  signal: AbortSignal,
  log: (message: string) => void,
): Promise<CloudLink & { readonly persisted: Persisted }> {
  const client = new CloudClient(managed.api);
  const credentials = await provision(client, persisted.uuid, persisted.cloud, { ...managed, signal, log });
  const saved = { ...persisted, cloud: credentials };
  savePersisted(dataDir, saved);
  return { managed, client, credentials, persisted: saved };
}

/** The cloud's target for the device, and the fleet (its uuid) that the latest target named. */
function cloudTarget(link: CloudLink, device: Device, onFleetNamed: () => void) {
  let appUuid: string | undefined;
  const source: TargetSource = async () => {
    const target = await link.client.fetchTarget(device.uuid, link.credentials.deviceKey);
    // The first target to name the fleet lets a v3 report name the running commit: report again.
    if (target.appUuid !== undefined && target.appUuid !== appUuid) {
      appUuid = target.appUuid;
      onFleetNamed();
    }
    return target.commit;
  };
  return { source, appUuid: () => appUuid };
}

function stateReporter(
  link: CloudLink,
  parts: {
    readonly device: Device;
    readonly advertisedHost: string;
    readonly appUuid: () => string | undefined;
    readonly signal: AbortSignal;
    readonly log: (message: string) => void;
  },
): StateReporter {
  const { device, advertisedHost, appUuid, signal, log } = parts;
  return new StateReporter({
    client: link.client,
    device,
    deviceKey: link.credentials.deviceKey,
    supervisorAddress: advertisedHost,
    dataDir: device.dataDir,
    heartbeatMs: link.managed.heartbeatMs,
    stateApi: link.managed.stateApi ?? "v3",
    appUuid,
    signal,
    log,
  });
}

/** What the device API asks of the cloud: the device's tags, and whether reports get through. */
function cloudApi(link: CloudLink, reporter: StateReporter): NonNullable<ApiDeps["cloud"]> {
  const { client, credentials } = link;
  return {
    tags: () => client.fetchDeviceTags(credentials.deviceId, credentials.deviceKey),
    connected: () => reporter.healthy(),
  };
}

function apiServer(deps: ApiDeps, log: (message: string) => void, faults: Faults | undefined): Server {
  return createApiServer({
    routes: [
      ...deviceRoutes(deps),
      ...appRoutes(deps),
      ...hostConfigRoutes(deps),
      ...v2AppRoutes(deps),
      ...v2DeviceRoutes(deps),
    ],
    version: deps.version,
    apiKey: () => deps.device.apiKey,
    log,
    onAnswer: (line) => deps.journal.record(line),
    ...(faults ? { faults } : {}),
  });
}

/** Stops every part (once) and closes the API; resolves when the server has closed. */
function closer(controller: AbortController, server: Server): () => Promise<void> {
  const closed = new Promise<void>((resolve) => server.once("close", resolve));
  return async () => {
    if (!controller.signal.aborted) {
      controller.abort();
      server.close();
      server.closeAllConnections();
    }
    await closed;
  };
}
