import type { InputFieldMap } from "@pothos/core";
import type { Delivery } from "../../proxy/send-command.ts";
import type { DeviceResult } from "../../proxy/types.ts";
import { deliveryArguments } from "./arguments.ts";
import type { Builder, ObjectRef } from "./builder.ts";
import type { Row } from "./graphql-model.ts";
import {
  type CommandInput,
  command,
  commandMutations,
  commandQueries,
  type Outcome,
  tableInput,
} from "./supervisor-commands.ts";

// Remote control over GraphQL: a field per command of supervisor-commands.ts, and two of their own
// (the host configuration's PATCH, any endpoint). Every field takes `target`; a mutation takes
// `async` and `idempotencyKey` too (arguments.ts), after its own arguments.

/** `SupervisorTarget` and `SupervisorResult`, the types of every command field. */
function commandTypes(builder: Builder, device: ObjectRef, commandJob: ObjectRef) {
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
          context.loaders.load("device", result.deviceId, info) as never,
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
            : (context.loaders.load("command_job", outcome.job, info) as never),
      }),
    }),
  });
  return { target, result };
}

/** One command field: its own arguments, and its request from the field's arguments. */
interface CommandField {
  readonly root: "query" | "mutation";
  readonly description: string;
  /** Between `target` and a mutation's `async` and `idempotencyKey`. */
  readonly args: InputFieldMap;
  readonly input: (args: Row) => CommandInput;
}

export function supervisorFields(builder: Builder, device: ObjectRef, commandJob: ObjectRef): void {
  const types = commandTypes(builder, device, commandJob);
  const add = (name: string, field: CommandField) => {
    // A query field's builder differs from a mutation field's only in its root type.
    const on =
      field.root === "mutation"
        ? builder.mutationField.bind(builder)
        : (builder.queryField.bind(builder) as unknown as typeof builder.mutationField);
    on(name, (t) =>
      t.field({
        type: types.result,
        description: field.description,
        args: {
          target: t.arg({ type: types.target, required: true }),
          ...field.args,
          ...(field.root === "mutation" ? deliveryArguments(builder) : {}),
        },
        resolve: (_root, args, context) =>
          command(context, args.target, field.input(args as Row), args as Delivery),
      }),
    );
  };
  const force = () =>
    builder.args((t) => ({ force: t.boolean({ description: "Override the update lock" }) }));
  for (const [root, commands] of [
    ["mutation", commandMutations],
    ["query", commandQueries],
  ] as const) {
    for (const [name, spec] of Object.entries(commands))
      add(name, {
        root,
        description: `${spec.description} (${spec.method} ${spec.path})`,
        args: spec.force ? force() : {},
        input: (args) => tableInput(spec, args),
      });
  }
  add("supervisorSetHostConfig", {
    root: "mutation",
    description: "Change the host configuration (PATCH /v1/device/host-config)",
    args: builder.args((t) => ({ config: t.field({ type: "JSON", required: true }) })),
    input: (args) => ({ path: "/v1/device/host-config", method: "PATCH", data: args.config }),
  });
  add("supervisorRequest", {
    root: "mutation",
    description: "Any supervisor endpoint: POST /supervisor/<path> as a mutation",
    args: builder.args((t) => ({
      path: t.string({ required: true, description: "The supervisor path, e.g. /v1/device" }),
      method: t.string({ description: "GET, POST, PUT, PATCH, DELETE or HEAD (default POST)" }),
      data: t.field({ type: "JSON" }),
    })),
    input: (args) => ({
      path: args.path as string,
      ...(args.method ? { method: args.method as string } : {}),
      ...(args.data !== undefined && args.data !== null ? { data: args.data } : {}),
    }),
  });
}
