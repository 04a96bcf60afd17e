import type { KeyBox } from "../auth/key-box.ts";
import type { Permissions } from "../auth/permissions.ts";
import type { Database, Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import type { NetworkGuard } from "./network-guard.ts";
import type { ProxyOutcome } from "./outcome.ts";
import type { TargetKeys } from "./targets.ts";

// What the two ways a command runs share: answered at once (command.ts) and as a job (jobs/). Both
// import these from here, so neither imports the other.

export interface ProxyInput extends TargetKeys {
  /** The supervisor path: `/v1/reboot`, `/ping`. */
  readonly path: string;
  readonly method?: unknown;
  readonly data?: unknown;
  /**
   * The command addresses each device's own fleet (the supervisor's app): `:appId` in the path and
   * `appId` in the data become the fleet id of the device it is sent to.
   */
  readonly appScoped?: boolean;
}

/** What is sent to each device, checked once: the same for a command answered at once and for a job. */
export interface SupervisorCommand {
  readonly method: string;
  /** The supervisor path as given: `/v1/reboot`, `/v1/apps/:appId/stop`. */
  readonly path: string;
  readonly data: object | undefined;
  /** As ProxyInput.appScoped. */
  readonly appScoped: boolean;
}

export interface DeviceResult {
  readonly deviceId: number;
  readonly uuid: string;
  /** The device's answer; 502/504 when it could not be reached, 501 when its supervisor lacks the endpoint. */
  readonly statusCode: number;
  readonly ok: boolean;
  readonly body: unknown;
  readonly contentType?: string;
  readonly error?: string;
}

/** How the proxy reaches devices: their keys, the networks it may call, how long one may take. */
export interface DeviceCallContext {
  readonly keys: KeyBox;
  readonly guard: NetworkGuard;
  readonly timeoutMs: number;
}

/** One lane of a job: what to send its devices, and how many of them it calls at once. */
export interface LaneData {
  readonly job: number;
  /**
   * The command as the caller gave it, credentials included: the job's row keeps it redacted, so
   * the worker reads it from here (pg-boss's table, which no API exposes and which drops the lane
   * soon after it finished).
   */
  readonly command: SupervisorCommand;
  /** Devices in flight at most; absent in a batch queued before lanes (the default width then). */
  readonly width?: number;
  /**
   * The lane stays until none of the job's devices is running, taking over the claims of workers
   * that died. A lane run again by pg-boss (its worker died) does so too.
   */
  readonly sweep?: boolean;
}

/** What a proxy context needs to send commands as jobs. */
export interface CommandJobs {
  /** The queue (jobs/queue.ts), started on first use (jobs/start.ts). */
  readonly queue: () => Promise<{
    enqueue(tx: Executor, lanes: readonly LaneData[], delaySeconds?: number): Promise<void>;
  }>;
  /** The lanes of a job to `devices` devices, by width. */
  readonly lanes: (devices: number) => number[];
}

/** Everything a command needs but the command: the sender (permissions, actor) and the proxy's own. */
export interface ProxyContext extends DeviceCallContext {
  readonly db: Database;
  readonly model: Model;
  readonly permissions: Permissions;
  readonly actor: number;
  readonly concurrency: number;
  /** Told each command's per-device outcomes (/metrics). */
  readonly observe?: (outcomes: readonly ProxyOutcome[]) => void;
  /** The job queue, for commands sent as jobs (`Prefer: respond-async`); none: refused. */
  readonly jobs?: CommandJobs;
}

/** The proxy's own dependencies: a command's context but its sender's rights. */
export type CommandDeps = Omit<ProxyContext, "permissions" | "actor">;
