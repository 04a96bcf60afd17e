import type { Authenticated } from "../auth/caller.ts";
import type { Permissions } from "../auth/permissions.ts";
import type { Acting } from "../auth/request-context.ts";
import { Forbidden } from "../errors.ts";
import { proxyCommand } from "./command.ts";
import { type CommandJobRow, checkIdempotencyKey, submitCommandJob } from "./jobs/submit.ts";
import type { CommandDeps, DeviceResult, ProxyInput } from "./types.ts";

// How every surface sends a command (POST /supervisor/<path>, the restart routes, GraphQL's
// supervisor fields): who may send one, and whether it is answered at once or runs as a job.

/**
 * Only a user sends commands: their session or a named key, never a device's or a fleet's key.
 * GraphQL answers it as it is; the HTTP routes as ./refusals.ts says.
 */
export class NotAUser extends Forbidden {
  constructor() {
    super("Only users may send commands to devices");
  }
}

/** Who sends a command, with their rights as they are now. */
export interface Sender {
  readonly caller: Extract<Authenticated, { readonly kind: "user" }>;
  readonly permissions: Permissions;
  readonly actor: number;
}

export function senderOf({ caller, permissions }: Acting<Authenticated>): Sender {
  if (caller.kind !== "user") throw new NotAUser();
  return { caller, permissions, actor: caller.actor };
}

/** How a command is sent: as a job when asked for (`Prefer: respond-async`, GraphQL's `async`). */
export interface Delivery {
  readonly async?: boolean | null | undefined;
  /** `Idempotency-Key` of a job: a retry with the same key gets the job the first call made. */
  readonly idempotencyKey?: unknown;
}

export type Sent = { readonly results: DeviceResult[] } | { readonly job: CommandJobRow };

/**
 * Sends a command at once (./command.ts), or as a job (./jobs/submit.ts) when the delivery asks for
 * one and this server runs jobs; without them an asked-for job is answered at once.
 */
export async function sendCommand(
  sender: Sender,
  input: ProxyInput,
  delivery: Delivery,
  deps: CommandDeps,
): Promise<Sent> {
  const context = { ...deps, ...sender };
  const { jobs } = deps;
  if (delivery.async && jobs) {
    const key = checkIdempotencyKey(delivery.idempotencyKey);
    return { job: await submitCommandJob(input, key, { ...context, jobs }) };
  }
  return { results: await proxyCommand(input, context) };
}
