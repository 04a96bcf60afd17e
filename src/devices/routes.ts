import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { createApiKey } from "../auth/api-keys.ts";
import type { Caller } from "../auth/caller.ts";
import { adminPermissions } from "../auth/permissions.ts";
import { writableRowActor } from "../auth/writable-row.ts";
import type { Database } from "../db/database.ts";
import { BadRequest, NotFound, Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { LinkReference } from "../odata/write/values.ts";
import { createEntity } from "../odata/write/write.ts";
import type { KeyBox } from "./key-box.ts";
import { markSilentDevicesOffline, recordState, stateReport, targetState } from "./state.ts";

export interface DeviceDeps {
  readonly db: Database;
  readonly model: Model;
  readonly keys: KeyBox;
  readonly requireCaller: (request: FastifyRequest) => Promise<Caller>;
  /** A device not heard from for this long is marked offline. */
  readonly offlineAfterSeconds: number;
}

const registration = z.strictObject({
  application: z.number().int().positive(),
  uuid: z
    .string()
    .regex(/^[0-9a-f]{32}([0-9a-f]{30})?$/, "must be 32 (or 62) lowercase hexadecimal characters"),
  device_type: z.string().min(1).optional(),
  device_name: z.string().min(1).optional(),
  // The registering user (balena clients send it); the fleet decides who may register.
  user: z.number().int().optional(),
});

function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  throw new BadRequest(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
}

/** The device-facing API: a supervisor registers, reports its state and learns its target. */
export function deviceRoutes(app: FastifyInstance, deps: DeviceDeps): void {
  const { db, model, keys } = deps;

  /** A provisioning key registers into its own fleet; a user into a fleet they may change. */
  async function mayRegister(caller: Caller, fleet: number): Promise<void> {
    if (caller.kind === "application") {
      if (caller.applicationId !== fleet) throw new Unauthorized();
      return;
    }
    if (caller.kind !== "user") throw new Unauthorized();
    await writableRowActor(db, model, caller, "application", fleet);
  }

  app.post("/device/register", async (request, reply) => {
    const caller = await deps.requireCaller(request);
    const body = parsed(registration, request.body);
    await mayRegister(caller, body.application);
    // The caller's right to register was checked above; the device is made by the write core's rules.
    const id = await createEntity(
      "device",
      {
        belongs_to__application: body.application,
        uuid: body.uuid,
        ...(body.device_name ? { device_name: body.device_name } : {}),
        ...(body.device_type
          ? { is_of__device_type: new LinkReference("device_type", "slug", body.device_type, "device_type") }
          : {}),
      },
      { db, model, permissions: adminPermissions, actor: caller.actor },
    );
    const [device] = await db.query<{ actor: number }>({
      text: `SELECT "actor" FROM "device" WHERE "id" = $1::int4`,
      values: [id],
    });
    if (!device) throw new Error("registered device vanished");
    const apiKey = await createApiKey(db, { actor: device.actor, name: "device key" });
    return reply.code(201).send({ id, uuid: body.uuid, api_key: apiKey });
  });

  /** Only the device itself speaks for its state. */
  async function asDevice(request: FastifyRequest<{ Params: { uuid: string } }>): Promise<string> {
    const caller = await deps.requireCaller(request);
    if (caller.kind !== "device" || caller.uuid !== request.params.uuid) throw new Unauthorized();
    return caller.uuid;
  }

  app.patch<{ Params: { uuid: string } }>("/device/v2/:uuid/state", async (request, reply) => {
    const uuid = await asDevice(request);
    if (!(await recordState(db, uuid, parsed(stateReport, request.body), keys)))
      throw new NotFound(`No device ${uuid}`);
    return reply.type("application/json").send(JSON.stringify("OK"));
  });

  app.get<{ Params: { uuid: string } }>("/device/v2/:uuid/state", async (request) => {
    const uuid = await asDevice(request);
    const target = await targetState(db, uuid);
    if (!target) throw new NotFound(`No device ${uuid}`);
    return { uuid, target };
  });

  // The sweeper: every third of the timeout, devices silent for longer go offline.
  const sweep = setInterval(
    () => {
      markSilentDevicesOffline(db, deps.offlineAfterSeconds).catch((error) =>
        app.log.error({ err: error }, "offline sweep failed"),
      );
    },
    Math.max(1, deps.offlineAfterSeconds / 3) * 1000,
  );
  sweep.unref();
  app.addHook("onClose", async () => clearInterval(sweep));
}
