import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { createApiKey } from "../auth/api-keys.ts";
import type { Authenticated } from "../auth/caller.ts";
import type { KeyBox } from "../auth/key-box.ts";
import type { Permissions } from "../auth/permissions.ts";
import { type Acting, asWriter, requestContext } from "../auth/request-context.ts";
import { LinkReference } from "../core/query.ts";
import { writableRowActor } from "../core/writable-row.ts";
import { createEntity } from "../core/write/write.ts";
import type { Database } from "../db/database.ts";
import { sql } from "../db/sql.ts";
import { BadRequest, NotFound, Unauthorized } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Model } from "../model/types.ts";
import { repeatEvery } from "./repeat.ts";
import { ReportBatcher, reportBatching } from "./report-batcher.ts";
import { markSilentDevicesOffline, type ReportRow, recordStates, reportRow, stateReport } from "./state.ts";
import { parseStateV3, recordStateV3 } from "./state-v3.ts";
import {
  type DeviceCaller,
  notModified,
  parseTarget,
  TargetReads,
  targetDigest,
  targetEtag,
  targetRelease,
  targetV2,
} from "./target.ts";
import { TargetCache } from "./target-cache.ts";
import { type PartsTarget, TargetParts } from "./target-parts.ts";
import { sharedV3, targetV3Text } from "./target-v3.ts";

export interface DeviceDeps {
  readonly db: Database;
  readonly model: Model;
  readonly keys: KeyBox;
  /** A device not heard from for this long is marked offline. */
  readonly offlineAfterSeconds: number;
  /** The change bus, whose announcements keep the target-state cache true. */
  readonly events: EventBus;
  /** How long a state report waits for others to be written with it (report-batcher.ts). */
  readonly reportWindowMs?: number;
  /** How many devices' target digests the cache holds (target-cache.ts); 0: no cache. */
  readonly targetCacheSize?: number;
}

// About 200 bytes a device: 20 MB. A larger fleet re-reads its least recently polled devices.
const TARGET_CACHE_SIZE = 100_000;
// A fleet's shared part is its variables and its release's composition, a few kB; 16 MB of their
// text (about 50 MB in memory) holds thousands. The least recently used beyond are read again.
const TARGET_PARTS_BYTES = 16 * 1024 * 1024;

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

/** How often the sweeper looks for silent devices: a third of the time-out, at least a second. */
function sweepPeriodMs(offlineAfterSeconds: number): number {
  return Math.max(1, offlineAfterSeconds / 3) * 1000;
}

function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  throw new BadRequest(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
}

/**
 * A registration writes as the fleet allows (checked by `mayRegister`), but names the rows it links
 * to (the device type) as the caller sees them: a private device type the caller cannot read is as
 * unknown as one that does not exist.
 */
function registering(own: Permissions): Permissions {
  return { readable: own.readable, writable: () => sql`TRUE` };
}

/** The device-facing API: a supervisor registers, reports its state and learns its target. */
export function deviceRoutes(app: FastifyInstance, deps: DeviceDeps): void {
  const { db, model, keys } = deps;
  const targets = new TargetReads(model);
  const cache = new TargetCache(deps.targetCacheSize ?? TARGET_CACHE_SIZE);
  const unfollow = cache.size > 0 ? cache.follow(deps.events) : undefined;
  // The parts hold by the cache's announcements, so only where it follows them.
  const parts = cache.size > 0 ? new TargetParts(model, cache, TARGET_PARTS_BYTES) : undefined;
  app.addHook("onClose", async () => unfollow?.());
  // Concurrent reports are written together, each answered once its batch committed.
  const reports = new ReportBatcher<ReportRow>((rows) => recordStates(db, rows), {
    ...reportBatching,
    windowMs: deps.reportWindowMs ?? reportBatching.windowMs,
  });
  app.addHook("onClose", () => reports.drain());

  /**
   * A provisioning key registers into its own fleet; a user into a fleet they may change (one they
   * cannot see, or may only read, is refused: ./refusals.ts).
   */
  async function mayRegister({ caller, permissions }: Acting<Authenticated>, fleet: number): Promise<void> {
    if (caller.kind === "application") {
      if (caller.applicationId !== fleet) throw new Unauthorized();
      return;
    }
    if (caller.kind !== "user") throw new Unauthorized();
    await writableRowActor({ db, model, permissions }, "application", fleet);
  }

  app.post("/device/register", async (request, reply) => {
    const registrar = asWriter(requestContext(request));
    const { caller } = registrar;
    const body = parsed(registration, request.body);
    await mayRegister(registrar, body.application);
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
      { db, model, permissions: registering(registrar.permissions), actor: caller.actor },
    );
    const [device] = await db.query<{ actor: number }>({
      text: `SELECT "actor" FROM "device" WHERE "id" = $1::int4`,
      values: [id],
    });
    if (!device) throw new Error("registered device vanished");
    // open-balena-api gives a registered device's key no name (src/features/device-provisioning/register.ts).
    const apiKey = await createApiKey(db, { actor: device.actor, name: null });
    return reply.code(201).send({ id, uuid: body.uuid, api_key: apiKey });
  });

  /**
   * Only the device itself speaks for its state or reads its target: another device's uuid is
   * refused as a missing one is, with the same 401.
   */
  function asDevice(request: FastifyRequest<{ Params: { uuid: string } }>): DeviceCaller {
    const { caller } = asWriter(requestContext(request));
    if (caller.kind !== "device" || caller.uuid !== request.params.uuid) throw new Unauthorized();
    return caller;
  }

  /** The device's target read whole, in one statement. */
  async function readWhole(caller: DeviceCaller): Promise<PartsTarget> {
    const json = await targets.read(db, caller);
    if (json === undefined) throw new NotFound(`No device ${caller.uuid}`);
    const row = parseTarget(json);
    return {
      row,
      digest: targetDigest(json),
      v3: () => sharedV3(row.belongs_to__application, targetRelease(row)),
    };
  }

  /**
   * The device's target read now, from its own part and its fleet's shared ones while announcements
   * are heard (target-parts.ts), else whole; kept in the cache unless a change was announced meanwhile.
   */
  async function readTarget(caller: DeviceCaller): Promise<PartsTarget> {
    const at = cache.stamp();
    const fromParts = parts && (await parts.read(db, caller));
    if (fromParts === "none") throw new NotFound(`No device ${caller.uuid}`);
    const target = fromParts ?? (await readWhole(caller));
    const { row, digest } = target;
    const fleet = row.belongs_to__application;
    cache.keep(
      caller.deviceId,
      {
        digest,
        fleet: fleet.id,
        pin: row.should_be_running__release?.id ?? 0,
        release: fleet.should_be_running__release?.id ?? 0,
      },
      at,
    );
    return target;
  }

  /**
   * A target-state read with an ETag: `If-None-Match` naming the one the cache knows is a 304 with
   * no statement (the caller's credential may come from its own cache too); else the state is read.
   */
  async function sendTarget(
    request: FastifyRequest<{ Params: { uuid: string } }>,
    reply: FastifyReply,
    endpoint: "v2" | "v3",
  ): Promise<FastifyReply> {
    const caller = asDevice(request);
    const ifNoneMatch = request.headers["if-none-match"];
    const known = cache.digest(caller);
    if (known !== undefined && notModified(ifNoneMatch, targetEtag(endpoint, known)))
      return reply.header("etag", targetEtag(endpoint, known)).code(304).send();
    const { row, digest, v3 } = await readTarget(caller);
    const etag = targetEtag(endpoint, digest);
    reply.header("etag", etag);
    if (notModified(ifNoneMatch, etag)) return reply.code(304).send();
    return reply
      .type("application/json; charset=utf-8")
      .send(endpoint === "v3" ? targetV3Text(row, v3()) : JSON.stringify(targetV2(row)));
  }

  app.patch<{ Params: { uuid: string } }>("/device/v2/:uuid/state", async (request, reply) => {
    const { uuid } = asDevice(request);
    if (!(await reports.submit(reportRow(uuid, parsed(stateReport, request.body), keys))))
      throw new NotFound(`No device ${uuid}`);
    return reply.type("application/json").send(JSON.stringify("OK"));
  });

  // The real v17 supervisor's report: the body names the device; the answer is an empty 200.
  app.patch("/device/v3/state", async (request, reply) => {
    const { caller } = asWriter(requestContext(request));
    if (caller.kind !== "device") throw new Unauthorized();
    await recordStateV3(db, caller.uuid, parseStateV3(request.body), keys, (row) => reports.submit(row));
    return reply.code(200).send();
  });

  // A target read fills the target-state cache, which stays true only if what it reads is at least
  // as new as the announcements it has heard: a lagging replica could fill it with a target older
  // than a change already announced, answered until the next change. So targets read on the primary
  // (http/unit-of-work.ts: a route that decides itself, and never chooses a replica); the cache
  // answers most polls with no statement at all.
  const onPrimary = { config: { replicaReads: "own decision" } };
  app.get<{ Params: { uuid: string } }>("/device/v2/:uuid/state", onPrimary, (request, reply) =>
    sendTarget(request, reply, "v2"),
  );

  // The target a balena-supervisor (v12 and later) polls, with If-None-Match.
  app.get<{ Params: { uuid: string } }>("/device/v3/:uuid/state", onPrimary, (request, reply) =>
    sendTarget(request, reply, "v3"),
  );

  // The sweeper: every third of the timeout, devices silent for longer go offline.
  const sweeper = repeatEvery(sweepPeriodMs(deps.offlineAfterSeconds), async () => {
    await markSilentDevicesOffline(db, deps.offlineAfterSeconds).catch((error) =>
      app.log.error({ err: error }, "offline sweep failed"),
    );
  });
  app.addHook("onClose", async () => sweeper.stop());
}
