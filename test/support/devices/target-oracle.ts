import type { LightMyRequestResponse } from "fastify";
import { Authenticator } from "../../../src/auth/caller.ts";
import type { Executor } from "../../../src/db/database.ts";
import {
  notModified,
  parseTarget,
  TargetReads,
  targetDigest,
  targetEtag,
  targetV2,
} from "../../../src/devices/target.ts";
import { buildModel } from "../../../src/model/registry.ts";
import { targetV3Before } from "./target-v3-before.ts";

// What a device's poll answers when nothing is cached: its key resolved and its target read now,
// as src/devices/routes.ts did before it read targets from parts (issue 46): the whole target in
// one read, its v3 body built whole as before. For the target-state cache's differential tests.

export type Endpoint = "v2" | "v3";

export interface Answer {
  readonly status: number;
  readonly etag?: string | undefined;
  readonly body?: string | undefined;
}

const reads = new TargetReads(buildModel());

/** The answer to `GET /device/<endpoint>/<uuid>/state` with `key` and `ifNoneMatch`, read fresh. */
export async function freshAnswer(
  db: Executor,
  poll: { key: string; uuid: string; endpoint: Endpoint; ifNoneMatch: string | undefined },
): Promise<Answer> {
  const resolved = await new Authenticator(db, new Uint8Array(32)).resolve(poll.key);
  if (!("caller" in resolved)) return { status: 401 };
  const { caller } = resolved;
  if (caller.kind !== "device" || caller.uuid !== poll.uuid) return { status: 401 };
  const json = await reads.read(db, caller);
  if (json === undefined) return { status: 404 };
  const etag = targetEtag(poll.endpoint, targetDigest(json));
  if (notModified(poll.ifNoneMatch, etag)) return { status: 304, etag };
  const row = parseTarget(json);
  return {
    status: 200,
    etag,
    body: JSON.stringify(poll.endpoint === "v3" ? targetV3Before(row) : targetV2(row)),
  };
}

/** What a response answered, in the oracle's terms (an error's body is not compared). */
export function answerOf(response: LightMyRequestResponse): Answer {
  const { statusCode: status } = response;
  if (status === 200) return { status, etag: response.headers.etag as string, body: response.body };
  if (status === 304) return { status, etag: response.headers.etag as string };
  return { status };
}
