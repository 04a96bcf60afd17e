import { asWriter } from "../auth/request-context.ts";
import { type Delivery, sendCommand, senderOf } from "../proxy/send-command.ts";
import type { DeviceResult, ProxyInput } from "../proxy/types.ts";
import type { Builder } from "./builder.ts";
import type { GraphQLContext } from "./context.ts";
import type { ObjectRef } from "./objects.ts";
import type { Row } from "./types.ts";

// Remote control: each field is one call of the proxy's sendCommand (the same one behind
// POST /supervisor/<path>), so who may send, now or as a job, targeting, permissions, version gating
// and the audit are shared.

interface Command {
  readonly path: string;
  readonly method: "GET" | "POST" | "PATCH";
  readonly description: string;
  /** Takes `force` (override the update lock). */
  readonly force?: boolean;
  /** Addresses the device's own fleet (see ProxyInput.appScoped). */
  readonly appScoped?: boolean;
}

const mutations: Record<string, Command> = {
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

const queries: Record<string, Command> = {
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

interface Outcome {
  readonly targets: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly results: readonly DeviceResult[];
  /** The job's id, when the command was sent as a job. */
  readonly job?: number;
}

async function command(
  context: GraphQLContext,
  target: Row,
  input: Omit<ProxyInput, "uuid" | "deviceId" | "appId">,
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

export function supervisorFields(builder: Builder, device: ObjectRef, commandJob: ObjectRef): void {
  const target = builder.inputType("SupervisorTarget", {
    description: "The devices a command goes to: the fields given are ANDed; offline devices are left out",
    fields: (t) => ({
      uuid: t.string(),
      deviceId: t.int(),
      appId: t.int({ description: "Every device of this fleet" }),
    }),
  });
  const deviceResult = builder.objectRef<DeviceResult>("SupervisorDeviceResult").implement({
    description:
      "One device's answer (or the gateway's: 502 unreachable, 504 timed out, 501 supervisor too old)",
    fields: (t) => ({
      deviceId: t.exposeInt("deviceId"),
      uuid: t.exposeString("uuid"),
      statusCode: t.exposeInt("statusCode"),
      ok: t.exposeBoolean("ok"),
      body: t.field({ type: "JSON", nullable: true, resolve: (result) => result.body }),
      error: t.string({ nullable: true, resolve: (result) => result.error ?? null }),
      device: t.field({
        type: device,
        nullable: true,
        description: "The device, as the caller may read it (looked up in one batch for all results)",
        resolve: (result, _args, context, info) =>
          context.loaders.load(context, "device", result.deviceId, info) as never,
      }),
    }),
  });
  const result = builder.objectRef<Outcome>("SupervisorResult").implement({
    description:
      "A command's outcome over every targeted device; sent with `async: true`, the job that runs it (no results yet)",
    fields: (t) => ({
      targets: t.exposeInt("targets"),
      succeeded: t.exposeInt("succeeded"),
      failed: t.exposeInt("failed"),
      results: t.field({ type: [deviceResult], resolve: (outcome) => [...outcome.results] }),
      job: t.field({
        type: commandJob,
        nullable: true,
        description: "The command job (with `async: true`), as `commandJob(id)` reads it",
        resolve: (outcome, _args, context, info) =>
          outcome.job === undefined
            ? null
            : (context.loaders.load(context, "command_job", outcome.job, info) as never),
      }),
    }),
  });
  const asyncDescription = "Answer at once with a job that runs the command (as `Prefer: respond-async`)";
  const keyDescription = "With `async`: a retry with the same key returns the job the first call made";

  const fieldsOf = (commands: Record<string, Command>, add: typeof builder.mutationField, jobs: boolean) => {
    for (const [name, spec] of Object.entries(commands)) {
      add(name, (t) =>
        t.field({
          type: result,
          description: `${spec.description} (${spec.method} ${spec.path})`,
          args: {
            target: t.arg({ type: target, required: true }),
            ...(spec.force ? { force: t.arg.boolean({ description: "Override the update lock" }) } : {}),
            ...(jobs
              ? {
                  async: t.arg.boolean({ description: asyncDescription }),
                  idempotencyKey: t.arg.string({ description: keyDescription }),
                }
              : {}),
          },
          resolve: (_root, args, context) =>
            command(
              context,
              args.target,
              {
                path: spec.path,
                method: spec.method,
                ...(spec.force
                  ? { data: { force: (args as { force?: boolean | null }).force === true } }
                  : {}),
                ...(spec.appScoped ? { appScoped: true } : {}),
              },
              args as Delivery,
            ),
        }),
      );
    }
  };
  fieldsOf(mutations, builder.mutationField.bind(builder), true);
  // Reads are query fields; their builder differs from the mutation one only in its root type.
  fieldsOf(queries, builder.queryField.bind(builder) as unknown as typeof builder.mutationField, false);

  builder.mutationField("supervisorSetHostConfig", (t) =>
    t.field({
      type: result,
      description: "Change the host configuration (PATCH /v1/device/host-config)",
      args: {
        target: t.arg({ type: target, required: true }),
        config: t.arg({ type: "JSON", required: true }),
        async: t.arg.boolean({ description: asyncDescription }),
        idempotencyKey: t.arg.string({ description: keyDescription }),
      },
      resolve: (_root, args, context) =>
        command(
          context,
          args.target,
          { path: "/v1/device/host-config", method: "PATCH", data: args.config },
          args,
        ),
    }),
  );
  builder.mutationField("supervisorRequest", (t) =>
    t.field({
      type: result,
      description: "Any supervisor endpoint: POST /supervisor/<path> as a mutation",
      args: {
        target: t.arg({ type: target, required: true }),
        path: t.arg.string({ required: true, description: "The supervisor path, e.g. /v1/device" }),
        method: t.arg.string({ description: "GET, POST, PUT, PATCH, DELETE or HEAD (default POST)" }),
        data: t.arg({ type: "JSON" }),
        async: t.arg.boolean({ description: asyncDescription }),
        idempotencyKey: t.arg.string({ description: keyDescription }),
      },
      resolve: (_root, args, context) =>
        command(
          context,
          args.target,
          {
            path: args.path,
            ...(args.method ? { method: args.method } : {}),
            ...(args.data !== undefined && args.data !== null ? { data: args.data } : {}),
          },
          args,
        ),
    }),
  );
}
