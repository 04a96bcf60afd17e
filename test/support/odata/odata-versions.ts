import { beforeAll, describe, expect } from "vitest";
import { type DatabaseKind, databaseKinds } from "../databases.ts";
import { useDemoServer } from "../demo-server.ts";
import { injectJson, type JsonReply, type Method } from "../inject-json.ts";
import type { TestServer } from "../server.ts";

// What the tests of API versions v1…v5 (test/odata/versions-*.test.ts) share. Every expectation is
// computed from the same data read through v6, renamed in JavaScript with the table below (written
// here independently of src/odata/versions/), so a test fails when a version names, reads or writes
// anything differently.

export type Row = Record<string, unknown>;

export type Version = "v1" | "v2" | "v3" | "v4" | "v5";
const olderVersions: readonly Version[] = ["v5", "v4", "v3", "v2", "v1"];

/** Per step, this version's name → the next version's name (fields and navigations). */
const steps: Record<Version, Record<string, Record<string, string>>> = {
  v5: {},
  v4: {},
  v3: {
    device: { name: "device_name", should_be_running__build: "should_be_running__release" },
    application: { owns__build: "owns__release" },
  },
  v2: {
    device: {
      application: "belongs_to__application",
      user: "belongs_to__user",
      device: "is_managed_by__device",
      support_expiry_date: "is_accessible_by_support_until__date",
    },
    application: {
      device: "owns__device",
      application: "depends_on__application",
      support_expiry_date: "is_accessible_by_support_until__date",
    },
  },
  v1: {},
};
const chain: readonly Version[] = ["v5", "v4", "v3", "v2", "v1"];

/** v6 name → the name in `version`, for a resource's fields and navigations (cumulative). */
export function renames(version: Version, resource: string): Map<string, string> {
  const names = new Map<string, string>(); // v6 name → current older name
  for (const step of chain) {
    for (const [older, next] of Object.entries(steps[step][resource] ?? {})) {
      const v6 = [...names.entries()].find(([, current]) => current === next)?.[0] ?? next;
      names.set(v6, older);
    }
    if (step === version) break;
  }
  return names;
}

export const hasBuild = (version: Version) => version === "v3" || version === "v2" || version === "v1";
/** The v6 resource name → its name in `version`. */
export const resourceName = (version: Version, v6: string) =>
  v6 === "release" && hasBuild(version) ? "build" : v6;

/** The name of a v6 field or navigation in `version`. */
const nameIn = (version: Version, resource: string, v6: string) => renames(version, resource).get(v6) ?? v6;

// Where the navigations the tests follow lead (v6 names), to rename inside expansions.
const targets: Record<string, Record<string, string>> = {
  device: {
    belongs_to__application: "application",
    should_be_running__release: "release",
    is_running__release: "release",
  },
  application: { owns__device: "device", owns__release: "release", depends_on__application: "application" },
  release: { belongs_to__application: "application", is_running_on__device: "device" },
};

/**
 * A v6 name in an older version: renamed, or kept. In OData v4 JSON and $metadata a link's id is
 * the property `<link>__id`, renamed with its link.
 */
export function oldName(names: Map<string, string>, name: string): string {
  const link = name.endsWith("__id") ? names.get(name.slice(0, -"__id".length)) : undefined;
  return names.get(name) ?? (link === undefined ? name : `${link}__id`);
}

/**
 * A v6 row as `version` shows it. A device read in v6 with `is_of__device_type($select=slug)` and
 * `is_running__release($select=commit)` expanded gets v5's text `device_type` and `is_on__commit`.
 */
export function toOld(version: Version, resource: string, row: Row): Row {
  const names = renames(version, resource);
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (resource === "device" && key === "is_of__device_type" && Array.isArray(value)) {
      out.device_type = (value[0] as Row | undefined)?.slug ?? null;
      continue;
    }
    if (resource === "device" && key === "is_running__release" && Array.isArray(value)) {
      out.is_on__commit = (value[0] as Row | undefined)?.commit ?? null;
      continue;
    }
    const target = targets[resource]?.[key];
    const renamed = oldName(names, key);
    out[renamed] =
      target && Array.isArray(value) ? value.map((item) => toOld(version, target, item as Row)) : value;
  }
  return out;
}

/** v6 names a v2 client must never see. */
export const v4Names = [
  "device_name",
  "belongs_to__application",
  "should_be_running__release",
  "owns__release",
];

// Expands a v6 device read needs so that toOld can build v5's derived text fields.
export const DERIVED = "is_of__device_type($select=slug),is_running__release($select=commit)";

/** A version's names of the v6 names the tests use most. */
export function namesIn(version: Version) {
  return {
    dev: (v6: string) => nameIn(version, "device", v6),
    app: (v6: string) => nameIn(version, "application", v6),
    releaseResource: resourceName(version, "release"),
  };
}

/** Every key of every object, at any depth. */
export function keysDeep(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysDeep(item, into);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysDeep(inner, into);
    }
  }
  return into;
}

/** Entity type name → `prop:<name>:<type>` and `nav:<name>:<type>` members. */
export function parseMetadata(xml: string): Map<string, string[]> {
  const types = new Map<string, string[]>();
  for (const match of xml.matchAll(/<EntityType Name="([^"]+)">(.*?)<\/EntityType>/gs)) {
    const members: string[] = [];
    for (const m of (match[2] as string).matchAll(
      /<(Property|NavigationProperty) Name="([^"]+)" Type="([^"]+)"/g,
    )) {
      members.push(`${m[1] === "Property" ? "prop" : "nav"}:${m[2]}:${m[3]}`);
    }
    types.set(match[1] as string, members);
  }
  return types;
}

export interface OlderVersions {
  /** Set in `beforeAll`: read it inside tests only. */
  readonly server: TestServer;
  /** The id of the demo fleet named `name`. */
  fleetId(name: string): number;
  /** The releases of the demo fleet named `name`, by id (v6 rows). */
  releases(name: string): Row[];
  call(version: string, method: string, path: string, payload?: unknown): Promise<JsonReply>;
  /** A GET that must succeed, in exactly one SQL statement; its `d`. */
  get(version: string, path: string): Promise<unknown>;
  rows(version: string, path: string): Promise<Row[]>;
  expectError(
    version: string,
    method: string,
    path: string,
    status: number,
    payload?: unknown,
  ): Promise<JsonReply>;
  /** The $metadata document of `version`. */
  metadata(version: string): Promise<string>;
}

/**
 * The suite of a topic: per database kind, one demo server (its fleets read through v6) that
 * `eachVersion` runs against once per older version, and `besides` once.
 */
export function describeOlderVersions(
  eachVersion: (versions: OlderVersions, version: Version) => void,
  besides?: (versions: OlderVersions) => void,
): void {
  describe.each(databaseKinds)("OData versions on %s", (kind) => {
    const versions = useOlderVersions(kind);
    describe.each(olderVersions)("%s", (version) => eachVersion(versions, version));
    besides?.(versions);
  });
}

/** Registers, in the calling `describe`, the demo server on a fresh `kind` database, its fleets read through v6. */
function useOlderVersions(kind: DatabaseKind): OlderVersions {
  const demo = useDemoServer(kind);
  const fleets = new Map<string, Row>();
  const releasesOf = new Map<string, Row[]>();

  const call = (version: string, method: string, path: string, payload?: unknown): Promise<JsonReply> =>
    injectJson(demo.server, method as Method, `/${version}${path}`, payload);

  async function get(version: string, path: string): Promise<unknown> {
    const reply = await call(version, "GET", path);
    expect(reply.status, `GET /${version}${path}: ${reply.raw}`).toBe(200);
    expect(reply.headers["x-sql-statements"], `GET /${version}${path}`).toBe("1");
    return (reply.body as { d: unknown }).d;
  }

  async function rows(version: string, path: string): Promise<Row[]> {
    return (await get(version, path)) as Row[];
  }

  beforeAll(async () => {
    for (const fleet of await rows("v6", "/application?$expand=owns__release($orderby=id)&$orderby=id")) {
      fleets.set(fleet.app_name as string, fleet);
      releasesOf.set(fleet.app_name as string, fleet.owns__release as Row[]);
    }
  });

  return {
    get server() {
      return demo.server;
    },
    fleetId: (name) => fleets.get(name)?.id as number,
    releases: (name) => releasesOf.get(name) as Row[],
    call,
    get,
    rows,
    async expectError(version, method, path, status, payload) {
      const reply = await call(version, method, path, payload);
      expect(reply.status, `${method} /${version}${path}: ${reply.raw}`).toBe(status);
      return reply;
    },
    async metadata(version) {
      const reply = await call(version, "GET", "/$metadata");
      expect(reply.status, reply.raw).toBe(200);
      expect(String(reply.headers["content-type"])).toMatch(/xml/);
      return reply.raw;
    },
  };
}
