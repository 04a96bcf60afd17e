import { createHash } from "node:crypto";
import type { Authenticated } from "../auth/caller.ts";
import { permissionsFor } from "../auth/policies.ts";
import type { ExpandItem, Expr, ODataQuery, QueryOptions } from "../core/query.ts";
import { type CompiledRead, compileQuery, runRead } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";

// A device's target state, as both target-state reads (v2 and v3) build it: one read through the
// planner, under the device key's own permissions, of everything the target is made of. Its JSON
// text (built by the database) is hashed into the ETag, which the target-state cache
// (target-cache.ts) then knows until a change is announced: a poll that finds nothing changed costs
// no statement while the device is cached, and one statement and a hash when it is not.

export type DeviceCaller = Extract<Authenticated, { kind: "device" }>;

export interface NameValue {
  readonly name: string;
  readonly value: string;
}

export interface TargetRelease {
  readonly id: number;
  readonly commit: string;
  readonly composition: unknown;
}

/** The row the read answers: the device, its variables, its pin, its fleet and the fleet's release. */
export interface TargetRow {
  readonly id: number;
  readonly uuid: string;
  readonly device_name: string;
  readonly device_config_variable: readonly NameValue[];
  readonly device_environment_variable: readonly NameValue[];
  readonly should_be_running__release: TargetRelease | null;
  readonly belongs_to__application: {
    readonly id: number;
    readonly uuid: string;
    readonly app_name: string;
    readonly slug: string;
    readonly is_host: boolean;
    readonly application_config_variable: readonly NameValue[];
    readonly application_environment_variable: readonly NameValue[];
    readonly should_be_running__release: TargetRelease | null;
  };
}

// Every expansion is ordered, so the same target always reads as the same text (and ETag).
const variables = (name: string): ExpandItem => ({
  name,
  count: false,
  options: {
    select: ["name", "value"],
    orderby: [{ path: { kind: "path", segments: ["name"] }, direction: "asc" }],
  },
});
/** A release as a target reads it. */
export const releaseOptions: QueryOptions = { select: ["id", "commit", "composition"] };
/** A fleet as a target reads it: what every device of the fleet shares. */
export const fleetOptions: QueryOptions = {
  select: ["id", "uuid", "app_name", "slug", "is_host"],
  expand: [
    variables("application_config_variable"),
    variables("application_environment_variable"),
    { name: "should_be_running__release", count: false, options: releaseOptions },
  ],
};
// A device whose fleet its key does not read (moved since the key was resolved) has no target.
const inReadableFleet: Expr = {
  kind: "comparison",
  op: "ne",
  left: { kind: "path", segments: ["belongs_to__application", "id"] },
  right: { kind: "null" },
};

/** A device's target read, its pin and fleet read with `release` and `fleet`. */
function deviceRead(deviceId: number, release: QueryOptions, fleet: QueryOptions): ODataQuery {
  return {
    resource: "device",
    key: { kind: "id", value: { kind: "number", value: deviceId } },
    count: false,
    options: {
      filter: inReadableFleet,
      select: ["id", "uuid", "device_name"],
      expand: [
        variables("device_config_variable"),
        variables("device_environment_variable"),
        { name: "should_be_running__release", count: false, options: release },
        { name: "belongs_to__application", count: false, options: fleet },
      ],
    },
  };
}

const idOnly: QueryOptions = { select: ["id"] };

/**
 * What is a device's own in its target, read as `targetQuery` reads it but for the pin and fleet,
 * which it names by id alone: text that `targetQuery`'s starts with (target-parts.ts).
 */
export function deviceTargetQuery(deviceId: number): ODataQuery {
  return deviceRead(deviceId, idOnly, idOnly);
}

/** Every input of a device's target: a change to any of them changes the read's text. */
export function targetQuery(deviceId: number): ODataQuery {
  return deviceRead(deviceId, releaseOptions, fleetOptions);
}

// The ids of a device no database holds (int4, negative), and a row key no table holds: a device
// read is compiled once for them, and each device's read is that statement with its own ids in
// their place.
const SENTINEL: DeviceCaller = {
  kind: "device",
  actor: -2_147_483_001,
  deviceId: -2_147_483_002,
  uuid: "",
  applicationId: -2_147_483_003,
};
const SENTINEL_KEY = -2_147_483_004;
const sentinelIds = [SENTINEL.actor, SENTINEL.deviceId, SENTINEL.applicationId, SENTINEL_KEY] as const;

/** Where each of the sentinel's ids sits among a statement's values (-1: none of them). */
function idSlots(values: readonly unknown[]): number[] {
  return values.map((value) => sentinelIds.indexOf(value as (typeof sentinelIds)[number]));
}

/**
 * A read of one row by its key under a device key's permissions, compiled once: the query is fixed
 * but for the key, and a device key's permissions differ only in the device's and its fleet's ids
 * (auth/policies.ts), which the statement takes as parameters. So a poll binds its ids into the one
 * statement, at a million devices as at one, instead of planning and compiling a read per device.
 */
export class DeviceRead {
  private readonly template: { readonly read: CompiledRead; readonly slots: readonly number[] } | undefined;

  constructor(
    private readonly model: Model,
    private readonly query: (key: number) => ODataQuery,
  ) {
    const read = this.compileFor(SENTINEL, SENTINEL_KEY);
    const slots = idSlots(read.statement.values);
    // Every id must be a parameter: one written into the text could not be rebound.
    const inText = sentinelIds.some((id) => read.statement.text.includes(String(Math.abs(id))));
    this.template = inText || !slots.includes(3) ? undefined : { read, slots };
  }

  compile(caller: DeviceCaller, key: number): CompiledRead {
    if (!this.template) return this.compileFor(caller, key);
    const { read, slots } = this.template;
    const ids = [caller.actor, caller.deviceId, caller.applicationId, key];
    const values = read.statement.values.map((value, index) => {
      const slot = slots[index] as number;
      return slot < 0 ? value : ids[slot];
    });
    return { ...read, statement: { ...read.statement, values } };
  }

  private compileFor(caller: DeviceCaller, key: number): CompiledRead {
    return compileQuery(this.query(key), {
      model: this.model,
      permissions: permissionsFor(caller),
      format: "v4",
    });
  }

  /** The read's text: a JSON array of at most one row; undefined when the caller reads none. */
  async read(db: Executor, caller: DeviceCaller, key: number): Promise<string | undefined> {
    const { json } = await runRead(db, this.compile(caller, key));
    return json === "[]" ? undefined : json;
  }
}

/** The whole target read of every device (`targetQuery`), bound to each device's ids. */
export class TargetReads {
  private readonly reads: DeviceRead;

  constructor(model: Model) {
    this.reads = new DeviceRead(model, targetQuery);
  }

  compile(caller: DeviceCaller): CompiledRead {
    return this.reads.compile(caller, caller.deviceId);
  }

  /** The read's text: a JSON array of at most one `TargetRow`; undefined when the device reads nothing. */
  read(db: Executor, caller: DeviceCaller): Promise<string | undefined> {
    return this.reads.read(db, caller, caller.deviceId);
  }
}

export function parseTarget(json: string): TargetRow {
  const [row] = JSON.parse(json) as [TargetRow];
  return row;
}

// Bumped whenever the bodies built from the same row change, so no client keeps a stale body.
const BODY_VERSION = "1";

/**
 * The digest of a read's text, which holds every input of the bodies: what the cache keeps. The
 * text may come in pieces (target-parts.ts writes it from parts), hashed as if joined.
 */
export function targetDigest(...text: readonly string[]): string {
  const hash = createHash("sha256").update(`${BODY_VERSION}\n`);
  for (const piece of text) hash.update(piece);
  return hash.digest("base64url").slice(0, 31);
}

/**
 * A strong ETag (RFC 9110 §8.8.3) of one endpoint's body: the endpoint's version and the digest of
 * the read's text (186 bits), so it is known from the digest without hashing on every poll.
 */
export function targetEtag(endpoint: "v2" | "v3", digest: string): string {
  return `"${endpoint.slice(1)}${digest}"`;
}

/**
 * `If-None-Match` names this ETag (or is `*`): the client has the current body. The comparison
 * is the weak one RFC 9110 §13.1.2 prescribes for this header, so `W/"x"` matches `"x"`.
 */
export function notModified(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const tags = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(",") : ifNoneMatch).split(",");
  return tags.some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}

/** The commit a device should run: its pin, else its fleet's target release. */
export function targetRelease(row: TargetRow): TargetRelease | null {
  return row.should_be_running__release ?? row.belongs_to__application.should_be_running__release;
}

/** `GET /device/v2/<uuid>/state`: fleetgate's own v2 body. */
export function targetV2(row: TargetRow): object {
  const fleet = row.belongs_to__application;
  return {
    uuid: row.uuid,
    target: { commit: targetRelease(row)?.commit ?? null, appId: fleet.id, appUuid: fleet.uuid },
  };
}
