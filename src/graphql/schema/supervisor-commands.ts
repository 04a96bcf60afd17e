import { asWriter } from "../../auth/request-context.ts";
import { type Delivery, sendCommand, senderOf } from "../../proxy/send-command.ts";
import type { DeviceResult, ProxyInput } from "../../proxy/types.ts";
import type { GraphQLContext } from "../context.ts";
import type { Row } from "./graphql-model.ts";

// Remote control: each field is one call of the proxy's sendCommand (the same one behind
// POST /supervisor/<path>), so who may send, now or as a job, targeting, permissions, version gating
// and the audit are shared.

export interface Command {
  readonly path: string;
  readonly method: "GET" | "POST" | "PATCH";
  readonly description: string;
  /** Takes `force` (override the update lock). */
  readonly force?: boolean;
  /** Addresses the device's own fleet (see ProxyInput.appScoped). */
  readonly appScoped?: boolean;
}

/** The commands that change a device, as mutations. */
export const commandMutations: Record<string, Command> = {
  supervisorBlink: {
    path: "/v1/blink",
    method: "POST",
    description: "Blink the device's identification LED",
  },
  supervisorUpdate: {
    path: "/v1/update",
    method: "POST",
    force: true,
    description: "Check for and apply the fleet's target release now",
  },
  supervisorReboot: { path: "/v1/reboot", method: "POST", force: true, description: "Reboot the device" },
  supervisorShutdown: {
    path: "/v1/shutdown",
    method: "POST",
    force: true,
    description: "Shut the device down",
  },
  supervisorPurge: {
    path: "/v1/purge",
    method: "POST",
    appScoped: true,
    description: "Clear the application's data on the device",
  },
  supervisorRestart: {
    path: "/v1/restart",
    method: "POST",
    appScoped: true,
    description: "Restart the application's services",
  },
  supervisorRegenerateApiKey: {
    path: "/v1/regenerate-api-key",
    method: "POST",
    description: "Give the supervisor a new API key (the cloud stores it from the device's answer)",
  },
  supervisorStopApp: {
    path: "/v1/apps/:appId/stop",
    method: "POST",
    force: true,
    appScoped: true,
    description: "Stop the application",
  },
  supervisorStartApp: {
    path: "/v1/apps/:appId/start",
    method: "POST",
    appScoped: true,
    description: "Start the application",
  },
};

/** The commands that read a device, as query fields. */
export const commandQueries: Record<string, Command> = {
  supervisorPing: { path: "/ping", method: "GET", description: "Whether the supervisor answers" },
  supervisorDeviceState: {
    path: "/v1/device",
    method: "GET",
    description: "The device's state as its supervisor reports it",
  },
  supervisorHostConfig: {
    path: "/v1/device/host-config",
    method: "GET",
    description: "The host configuration",
  },
  supervisorApp: {
    path: "/v1/apps/:appId",
    method: "GET",
    appScoped: true,
    description: "The application on the device",
  },
  supervisorHealthy: { path: "/v1/healthy", method: "GET", description: "Whether the supervisor is healthy" },
};

/** A command's outcome over every targeted device (`SupervisorResult`). */
export interface Outcome {
  readonly targets: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly results: readonly DeviceResult[];
  /** The job's id, when the command was sent as a job. */
  readonly job?: number;
}

/** A command's request to each device, before its targets are known. */
export type CommandInput = Omit<ProxyInput, "uuid" | "deviceId" | "appId">;

/** A command of the tables above as sent: `force` when it takes one, its fleet scope. */
export function tableInput(spec: Command, args: { readonly force?: boolean | null }): CommandInput {
  return {
    path: spec.path,
    method: spec.method,
    ...(spec.force ? { data: { force: args.force === true } } : {}),
    ...(spec.appScoped ? { appScoped: true } : {}),
  };
}

/** Sends a command to the devices `target` names, as the caller; with `delivery.async`, as a job. */
export async function command(
  context: GraphQLContext,
  target: Row,
  input: CommandInput,
  delivery: Delivery = {},
): Promise<Outcome> {
  const sender = senderOf(asWriter(context));
  const proxyInput: ProxyInput = {
    ...input,
    uuid: target.uuid ?? undefined,
    deviceId: target.deviceId ?? undefined,
    appId: target.appId ?? undefined,
  };
  const sent = await sendCommand(sender, proxyInput, delivery, context.core.proxy);
  if ("job" in sent) {
    const { job } = sent;
    return { targets: Number(job.targeted_count), succeeded: 0, failed: 0, results: [], job: job.id };
  }
  const { results } = sent;
  const succeeded = results.filter((result) => result.ok).length;
  return { targets: results.length, succeeded, failed: results.length - succeeded, results };
}
