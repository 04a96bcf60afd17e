import { createHash } from "node:crypto";
import type { Authenticated } from "../auth/caller.ts";
import type { Permissions } from "../auth/permissions.ts";
import { permissionsFor } from "../auth/policies.ts";
import type { ExpandItem, ODataQuery } from "../core/query.ts";
import { type CompiledRead, compileQuery, runRead } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";

// A device's target state, as both target-state reads (v2 and v3) build it: one read through the
// planner, under the device key's own permissions, of everything the target is made of. Its JSON
// text (built by the database) is hashed into the ETag before anything is parsed, so a poll that
// finds nothing changed costs one statement and a hash, not a serialization of the state.

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
const release = (name: string): ExpandItem => ({
  name,
  count: false,
  options: { select: ["id", "commit", "composition"] },
});

/** Every input of a device's target: a change to any of them changes the read's text. */
export function targetQuery(deviceId: number): ODataQuery {
  return {
    resource: "device",
    key: { kind: "id", value: { kind: "number", value: deviceId } },
    count: false,
    options: {
      // A device whose fleet its key does not read (moved since the key was resolved) has no target.
      filter: {
        kind: "comparison",
        op: "ne",
        left: { kind: "path", segments: ["belongs_to__application", "id"] },
        right: { kind: "null" },
      },
      select: ["id", "uuid", "device_name"],
      expand: [
        variables("device_config_variable"),
        variables("device_environment_variable"),
        release("should_be_running__release"),
        {
          name: "belongs_to__application",
          count: false,
          options: {
            select: ["id", "uuid", "app_name", "slug", "is_host"],
            expand: [
              variables("application_config_variable"),
              variables("application_environment_variable"),
              release("should_be_running__release"),
            ],
          },
        },
      ],
    },
  };
}

/** The same read by uuid, under a user's permissions (balena-sdk's device.getSupervisorTargetState). */
export function targetQueryByUuid(uuid: string): ODataQuery {
  return { ...targetQuery(0), key: { kind: "fields", values: [["uuid", { kind: "text", value: uuid }]] } };
}

/**
 * The compiled target read of each device, so a poll skips plan and compile: the query is fixed
 * but for the device, and callers alike in their permissions' `cacheKey` compile alike
 * (auth/policies.ts), so that key names the statement. Least recently used out first; every
 * device's statement has the same text, kept once.
 */
export class TargetReads {
  private readonly reads = new Map<string, CompiledRead>();
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly model: Model,
    private readonly capacity = 10_000,
  ) {}

  compile(caller: DeviceCaller): CompiledRead {
    const permissions = permissionsFor(caller);
    const key = permissions.cacheKey;
    const cached = key === undefined ? undefined : this.reads.get(key);
    if (key !== undefined && cached) {
      this.reads.delete(key);
      this.reads.set(key, cached);
      return cached;
    }
    const read = compileQuery(targetQuery(caller.deviceId), { model: this.model, permissions, format: "v4" });
    if (key === undefined || this.capacity <= 0) return read;
    const { text, values } = read.statement;
    if (!this.texts.has(text)) {
      if (this.texts.size >= 16) this.texts.clear();
      this.texts.set(text, text);
    }
    if (this.reads.size >= this.capacity) {
      const oldest = this.reads.keys().next().value;
      if (oldest !== undefined) this.reads.delete(oldest);
    }
    const kept = { kind: read.kind, statement: { text: this.texts.get(text) ?? text, values } };
    this.reads.set(key, kept);
    return kept;
  }

  /** The read's text: a JSON array of at most one `TargetRow`; undefined when the device reads nothing. */
  async read(db: Executor, caller: DeviceCaller): Promise<string | undefined> {
    const { json } = await runRead(db, this.compile(caller));
    return json === "[]" ? undefined : json;
  }

  /**
   * A device's target as a user reads it: everything in it under their own permissions, so a
   * device, fleet or variable they may not read is not in it (no fleet: no target).
   */
  async readAs(db: Executor, permissions: Permissions, uuid: string): Promise<string | undefined> {
    const { json } = await runRead(
      db,
      compileQuery(targetQueryByUuid(uuid), { model: this.model, permissions, format: "v4" }),
    );
    return json === "[]" ? undefined : json;
  }
}

export function parseTarget(json: string): TargetRow {
  const [row] = JSON.parse(json) as [TargetRow];
  return row;
}

// Bumped whenever the bodies built from the same row change, so no client keeps a stale body.
const BODY_VERSION = "1";

/**
 * A strong ETag (RFC 9110 §8.8.3) of one endpoint's body: the hash of the read's text, which holds
 * every input of the body, and of the endpoint and body version that turn it into the body.
 */
export function targetEtag(endpoint: "v2" | "v3", json: string): string {
  const hash = createHash("sha256").update(`${endpoint} ${BODY_VERSION}\n`).update(json).digest("base64url");
  return `"${hash.slice(0, 32)}"`;
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
