import type { Params } from "pinejs-client-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { FetchPine } from "../support/fetch-pine.ts";
import { overallStatus } from "../support/oracle.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// pinejs-client-core, the query builder inside balena-sdk, against a real listener. Every query object
// is one that clients-on-the-wire.md part A records; every expected result is computed with Prisma
// (plus plain JavaScript where Prisma's semantics differ from OData's), never through the OData API.

const special = "O'Brien & co/100%";
const nearMiss = "O'Brien & co/1000%";

// The wire shape of a row, written down here rather than read from the registry: the columns no API
// exposes, and the foreign keys that read as {"__id": N}. `actor` points to an internal table: an integer.
const hiddenColumns: Record<string, readonly string[]> = {
  device: [
    "supervisor_api_address",
    "supervisor_api_port",
    "supervisor_api_key_ciphertext",
    "last_heartbeat_at",
  ],
  device_type: ["catalogue"],
};
const linkColumns: Record<string, readonly string[]> = {
  device: [
    "belongs_to__application",
    "belongs_to__user",
    "is_managed_by__device",
    "should_be_running__release",
    "is_of__device_type",
    "is_running__release",
    "should_be_managed_by__supervisor_release",
    "is_managed_by__service_instance",
  ],
  application: [
    "user",
    "depends_on__application",
    "organization",
    "application_type",
    "is_for__device_type",
    "should_be_running__release",
  ],
  release: ["belongs_to__application", "is_created_by__user"],
  device_tag: ["device"],
  device_type: ["is_of__cpu_architecture"],
  organization: [],
};

type Row = Record<string, unknown>;

/** A Prisma row (its scalar columns; relations are capitalised and left out) as pinejs sends it. */
function wire(resource: string, row: object): Row {
  const hidden = hiddenColumns[resource] ?? [];
  const links = linkColumns[resource];
  if (!links) throw new Error(`no wire shape for ${resource}`);
  const out: Row = {};
  if (resource === "application") {
    // Computed, selected by default: the target release's commit and the device type's slug.
    const app = row as { TargetRelease?: { commit: string } | null; DeviceType?: { slug: string } };
    if (app.TargetRelease === undefined || app.DeviceType === undefined)
      throw new Error("load an application with appInclude");
    out.commit = app.TargetRelease?.commit ?? null;
    out.device_type = app.DeviceType.slug;
  }
  if (resource === "device_type") {
    // Computed, selected by default: the slug of its CPU architecture.
    const type = row as { CpuArchitecture?: { slug: string } };
    if (!type.CpuArchitecture)
      throw new Error("load a device type with { include: { CpuArchitecture: true } }");
    out.arch = type.CpuArchitecture.slug;
  }
  for (const [key, value] of Object.entries(row)) {
    if (/^[A-Z]/.test(key) || hidden.includes(key)) continue;
    if (links.includes(key)) out[key] = value === null ? null : { __id: value };
    else out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/** The relations `wire("application", …)` reads. */
const appInclude = { TargetRelease: true, DeviceType: true } as const;

function pick(row: Row, keys: readonly string[]): Row {
  return Object.fromEntries(keys.map((key) => [key, row[key]]));
}

interface Fixture {
  readonly p: PrismaClient;
  readonly org: { id: number; handle: string };
  readonly apps: Record<"lights" | "weather" | "kiosks" | "empty", { id: number; slug: string }>;
  /** The devices in id order. */
  readonly devices: readonly { id: number; uuid: string; device_name: string }[];
  readonly release: { id: number; commit: string; belongs_to__application: number };
}

interface Case {
  readonly name: string;
  readonly params: (f: Fixture) => Params & { resource: string };
  readonly expected: (f: Fixture) => Promise<unknown>;
  /** Collections without $orderby: compare as sets (sorted by id on both sides). */
  readonly unordered?: boolean;
  /** Instead of an exact expected value: a check on the result. */
  readonly check?: (actual: unknown, expected: unknown) => void;
}

const byId = (rows: unknown) =>
  Array.isArray(rows) ? [...rows].sort((a: Row, b: Row) => (a.id as number) - (b.id as number)) : rows;

const devicesWhere = async (
  f: Fixture,
  where: NonNullable<Parameters<PrismaClient["device"]["findMany"]>[0]>["where"],
) => (await f.p.device.findMany({ where, orderBy: { id: "asc" } })).map((row) => wire("device", row));
const appsWhere = async (
  f: Fixture,
  where: NonNullable<Parameters<PrismaClient["application"]["findMany"]>[0]>["where"],
) =>
  (await f.p.application.findMany({ where, include: appInclude, orderBy: { id: "asc" } })).map((row) =>
    wire("application", row),
  );
const allDevices = async (f: Fixture) =>
  (await f.p.device.findMany({ orderBy: { id: "asc" } })).map((row) => row);
const d = (f: Fixture, i: number) => {
  const device = f.devices[i];
  if (!device) throw new Error(`no device ${i}`);
  return device;
};

const cases: Case[] = [
  // ---- $filter: comparisons, null, and, dates -------------------------------------------------
  {
    name: "{uuid:'…'} (eq)",
    params: (f) => ({ resource: "device", options: { $filter: { uuid: d(f, 5).uuid } } }),
    expected: (f) => devicesWhere(f, { uuid: d(f, 5).uuid }),
  },
  {
    name: "{uuid:{$eq:'…'}}",
    params: (f) => ({ resource: "device", options: { $filter: { uuid: { $eq: d(f, 6).uuid } } } }),
    expected: (f) => devicesWhere(f, { uuid: d(f, 6).uuid }),
  },
  {
    name: "{note:null} (eq null)",
    params: () => ({ resource: "device", options: { $filter: { note: null }, $select: ["id", "note"] } }),
    expected: async (f) => (await devicesWhere(f, { note: null })).map((row) => pick(row, ["id", "note"])),
    unordered: true,
  },
  {
    name: "{note:{$ne:null}}",
    params: () => ({ resource: "device", options: { $filter: { note: { $ne: null } } } }),
    expected: (f) => devicesWhere(f, { note: { not: null } }),
    unordered: true,
  },
  {
    name: "{note:{$ne:'demo note 0'}} keeps the rows whose note is null (pinejs: IS DISTINCT FROM)",
    params: () => ({
      resource: "device",
      options: { $filter: { note: { $ne: "demo note 0" } }, $select: "id" },
    }),
    expected: async (f) =>
      (await allDevices(f)).filter((row) => row.note !== "demo note 0").map((row) => ({ id: row.id })),
    unordered: true,
  },
  {
    name: "{is_online:true, belongs_to__application:N} (and)",
    params: (f) => ({
      resource: "device",
      options: { $filter: { is_online: true, belongs_to__application: f.apps.lights.id } },
    }),
    expected: (f) => devicesWhere(f, { is_online: true, belongs_to__application: f.apps.lights.id }),
    unordered: true,
  },
  {
    name: "{id:{$gt:N}, cpu_usage:{$le:50}}",
    params: (f) => ({
      resource: "device",
      options: {
        $filter: { id: { $gt: d(f, 10).id }, cpu_usage: { $le: 50 } },
        $select: ["id", "cpu_usage"],
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { id: { gt: d(f, 10).id }, cpu_usage: { lte: 50 } })).map((row) =>
        pick(row, ["id", "cpu_usage"]),
      ),
    unordered: true,
  },
  {
    name: "{created_at:{$gt:Date}} on release (datetime literal)",
    params: () => ({
      resource: "release",
      options: { $filter: { created_at: { $gt: new Date(Date.UTC(2026, 0, 5)) } } },
    }),
    expected: async (f) =>
      (
        await f.p.release.findMany({
          where: { created_at: { gt: new Date(Date.UTC(2026, 0, 5)) } },
          orderBy: { id: "asc" },
        })
      ).map((row) => wire("release", row)),
    unordered: true,
  },
  {
    name: "{created_at:{$le:Date}} on release, equal at the boundary",
    params: () => ({
      resource: "release",
      options: {
        $filter: { created_at: { $le: new Date(Date.UTC(2026, 0, 11)) } },
        $select: ["id", "created_at"],
      },
    }),
    expected: async (f) =>
      (
        await f.p.release.findMany({
          where: { created_at: { lte: new Date(Date.UTC(2026, 0, 11)) } },
          orderBy: { id: "asc" },
        })
      ).map((row) => pick(wire("release", row), ["id", "created_at"])),
    unordered: true,
  },
  // ---- $in ---------------------------------------------------------------------------------------
  {
    name: "{id:{$in:[a,b,c]}}",
    params: (f) => ({
      resource: "device",
      options: { $filter: { id: { $in: [d(f, 1).id, d(f, 22).id, d(f, 59).id] } } },
    }),
    expected: (f) => devicesWhere(f, { id: { in: [d(f, 1).id, d(f, 22).id, d(f, 59).id] } }),
    unordered: true,
  },
  {
    name: "{uuid:{$in:['a','b']}}",
    params: (f) => ({
      resource: "device",
      options: { $filter: { uuid: { $in: [d(f, 3).uuid, d(f, 4).uuid] } } },
    }),
    expected: (f) => devicesWhere(f, { uuid: { in: [d(f, 3).uuid, d(f, 4).uuid] } }),
    unordered: true,
  },
  {
    name: "{id:{$in:[n]}}",
    params: (f) => ({ resource: "device", options: { $filter: { id: { $in: [d(f, 7).id] } } } }),
    expected: (f) => devicesWhere(f, { id: d(f, 7).id }),
  },
  {
    name: "{id:{$in:n}} (= id eq n)",
    params: (f) => ({ resource: "device", options: { $filter: { id: { $in: d(f, 8).id } } } }),
    expected: (f) => devicesWhere(f, { id: d(f, 8).id }),
  },
  // ---- $or / $and / $not -------------------------------------------------------------------------
  {
    name: "{$or:{id:n, device_name:'kiosks-03'}}",
    params: (f) => ({
      resource: "device",
      options: {
        $filter: { $or: { id: d(f, 5).id, device_name: "kiosks-03" } },
        $select: ["id", "device_name"],
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { OR: [{ id: d(f, 5).id }, { device_name: "kiosks-03" }] })).map((row) =>
        pick(row, ["id", "device_name"]),
      ),
    unordered: true,
  },
  {
    name: "{$or:[{a,b},{c}]}",
    params: () => ({
      resource: "device",
      options: {
        $filter: { $or: [{ is_online: true, os_variant: "dev" }, { cpu_usage: 0 }] },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { OR: [{ is_online: true, os_variant: "dev" }, { cpu_usage: 0 }] })).map((row) =>
        pick(row, ["id"]),
      ),
    unordered: true,
  },
  {
    name: "{$and:[{$or:[…]},{c}]}",
    params: (f) => ({
      resource: "device",
      options: {
        $filter: {
          $and: [
            { $or: [{ os_variant: "dev" }, { is_active: false }] },
            { belongs_to__application: f.apps.kiosks.id },
          ],
        },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (
        await devicesWhere(f, {
          AND: [
            { OR: [{ os_variant: "dev" }, { is_active: false }] },
            { belongs_to__application: f.apps.kiosks.id },
          ],
        })
      ).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "{$not:{a,b}}",
    params: () => ({
      resource: "device",
      options: { $filter: { $not: { is_online: true, os_variant: "dev" } }, $select: "id" },
    }),
    expected: async (f) =>
      (await allDevices(f))
        .filter((row) => !(row.is_online && row.os_variant === "dev"))
        .map((row) => ({ id: row.id })),
    unordered: true,
  },
  {
    name: "{$not:{note:'demo note 0'}} keeps null notes",
    params: () => ({
      resource: "device",
      options: { $filter: { $not: { note: "demo note 0" } }, $select: "id" },
    }),
    expected: async (f) =>
      (await allDevices(f)).filter((row) => row.note !== "demo note 0").map((row) => ({ id: row.id })),
    unordered: true,
  },
  // ---- string functions --------------------------------------------------------------------------
  {
    name: "{device_name:{$contains:'lights-1'}}",
    params: () => ({
      resource: "device",
      options: { $filter: { device_name: { $contains: "lights-1" } }, $select: ["id", "device_name"] },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { device_name: { contains: "lights-1" } })).map((row) =>
        pick(row, ["id", "device_name"]),
      ),
    unordered: true,
  },
  {
    name: "{device_name:{$startswith:'kiosks'}}",
    params: () => ({
      resource: "device",
      options: { $filter: { device_name: { $startswith: "kiosks" } }, $select: "id" },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { device_name: { startsWith: "kiosks" } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "{device_name:{$endswith:'-07'}}",
    params: () => ({
      resource: "device",
      options: { $filter: { device_name: { $endswith: "-07" } }, $select: "id" },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { device_name: { endsWith: "-07" } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "{$eq:[{$tolower:{$:'name'}},'demo']} on organization",
    params: () => ({
      resource: "organization",
      options: { $filter: { $eq: [{ $tolower: { $: "name" } }, "demo"] } },
    }),
    expected: async (f) =>
      (await f.p.organization.findMany({ orderBy: { id: "asc" } }))
        .filter((row) => row.name.toLowerCase() === "demo")
        .map((row) => wire("organization", row)),
    unordered: true,
  },
  {
    name: "{name:'demo'} on organization is case-sensitive (no row)",
    params: () => ({ resource: "organization", options: { $filter: { name: "demo" } } }),
    expected: async (f) =>
      (await f.p.organization.findMany({ where: { name: "demo" } })).map((row) => wire("organization", row)),
  },
  {
    name: "{$eq:[{$:['belongs_to__application','slug']},'demo/kiosks']} (to-one path)",
    params: () => ({
      resource: "device",
      options: {
        $filter: { $eq: [{ $: ["belongs_to__application", "slug"] }, "demo/kiosks"] },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { Application: { slug: "demo/kiosks" } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  // ---- strings with ' & / % ----------------------------------------------------------------------
  {
    name: `device_tag {value:"${special}"} (exact, % is no wildcard)`,
    params: () => ({ resource: "device_tag", options: { $filter: { value: special } } }),
    expected: async (f) =>
      (await f.p.deviceTag.findMany({ where: { value: special }, orderBy: { id: "asc" } })).map((row) =>
        wire("device_tag", row),
      ),
    unordered: true,
  },
  {
    name: `device {note:"${special}"}`,
    params: () => ({ resource: "device", options: { $filter: { note: special }, $select: ["id", "note"] } }),
    expected: async (f) => (await devicesWhere(f, { note: special })).map((row) => pick(row, ["id", "note"])),
    unordered: true,
  },
  {
    name: `device_tag {value:{$contains:"'Brien & co/100%"}}`,
    params: () => ({
      resource: "device_tag",
      options: { $filter: { value: { $contains: "'Brien & co/100%" } } },
    }),
    expected: async (f) =>
      (await f.p.deviceTag.findMany({ orderBy: { id: "asc" } }))
        .filter((row) => row.value.includes("'Brien & co/100%"))
        .map((row) => wire("device_tag", row)),
    unordered: true,
  },
  {
    name: `device_tag {value:{$startswith:"O'Brien & co/100"}}`,
    params: () => ({
      resource: "device_tag",
      options: { $filter: { value: { $startswith: "O'Brien & co/100" } } },
    }),
    expected: async (f) =>
      (await f.p.deviceTag.findMany({ orderBy: { id: "asc" } }))
        .filter((row) => row.value.startsWith("O'Brien & co/100"))
        .map((row) => wire("device_tag", row)),
    unordered: true,
  },
  {
    name: `device_tag {value:{$endswith:"/100%"}}`,
    params: () => ({ resource: "device_tag", options: { $filter: { value: { $endswith: "/100%" } } } }),
    expected: async (f) =>
      (await f.p.deviceTag.findMany({ orderBy: { id: "asc" } }))
        .filter((row) => row.value.endsWith("/100%"))
        .map((row) => wire("device_tag", row)),
    unordered: true,
  },
  {
    name: `device_tag {value:{$in:["${special}", 'x']}}`,
    params: () => ({ resource: "device_tag", options: { $filter: { value: { $in: [special, "x"] } } } }),
    expected: async (f) =>
      (
        await f.p.deviceTag.findMany({ where: { value: { in: [special, "x"] } }, orderBy: { id: "asc" } })
      ).map((row) => wire("device_tag", row)),
    unordered: true,
  },
  {
    name: `device_tag tolower(value) eq "${special.toLowerCase()}"`,
    params: () => ({
      resource: "device_tag",
      options: { $filter: { $eq: [{ $tolower: { $: "value" } }, special.toLowerCase()] } },
    }),
    expected: async (f) =>
      (await f.p.deviceTag.findMany({ orderBy: { id: "asc" } }))
        .filter((row) => row.value.toLowerCase() === special.toLowerCase())
        .map((row) => wire("device_tag", row)),
    unordered: true,
  },
  // ---- lambdas -----------------------------------------------------------------------------------
  {
    name: "application owns__device/any(d:d/device_name eq 'kiosks-03')",
    params: () => ({
      resource: "application",
      options: {
        $filter: { owns__device: { $any: { $alias: "d", $expr: { d: { device_name: "kiosks-03" } } } } },
      },
    }),
    expected: (f) => appsWhere(f, { Devices: { some: { device_name: "kiosks-03" } } }),
    unordered: true,
  },
  {
    name: "application owns__device/any(d:d/is_online eq false and d/os_variant eq 'dev')",
    params: () => ({
      resource: "application",
      options: {
        $filter: {
          owns__device: { $any: { $alias: "d", $expr: { d: { is_online: false, os_variant: "dev" } } } },
        },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await appsWhere(f, { Devices: { some: { is_online: false, os_variant: "dev" } } })).map((row) =>
        pick(row, ["id"]),
      ),
    unordered: true,
  },
  {
    name: "application owns__device/all(d:d/is_online eq true) (vacuously true for an empty fleet)",
    params: () => ({
      resource: "application",
      options: {
        $filter: { owns__device: { $all: { $alias: "d", $expr: { d: { is_online: true } } } } },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await appsWhere(f, { Devices: { every: { is_online: true } } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "application owns__device/all(d:d/cpu_temp ge 40)",
    params: () => ({
      resource: "application",
      options: {
        $filter: { owns__device: { $all: { $alias: "d", $expr: { d: { cpu_temp: { $ge: 40 } } } } } },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await f.p.application.findMany({ include: { Devices: true }, orderBy: { id: "asc" } }))
        .filter((app) => app.Devices.every((device) => device.cpu_temp !== null && device.cpu_temp >= 40))
        .map((app) => ({ id: app.id })),
    unordered: true,
  },
  {
    name: "device device_tag/all(t:t/tag_key eq 'location') (devices without tags match)",
    params: () => ({
      resource: "device",
      options: {
        $filter: { device_tag: { $all: { $alias: "t", $expr: { t: { tag_key: "location" } } } } },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { Tags: { every: { tag_key: "location" } } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "organization nested any: application/any(a:a/owns__device/any(d:d/device_name eq 'kiosks-03'))",
    params: () => ({
      resource: "organization",
      options: {
        $filter: {
          application: {
            $any: {
              $alias: "a",
              $expr: {
                a: { owns__device: { $any: { $alias: "d", $expr: { d: { device_name: "kiosks-03" } } } } },
              },
            },
          },
        },
      },
    }),
    expected: async (f) =>
      (
        await f.p.organization.findMany({
          where: { Applications: { some: { Devices: { some: { device_name: "kiosks-03" } } } } },
          orderBy: { id: "asc" },
        })
      ).map((row) => wire("organization", row)),
    unordered: true,
  },
  {
    name: "organization nested any with no match",
    params: () => ({
      resource: "organization",
      options: {
        $filter: {
          application: {
            $any: {
              $alias: "a",
              $expr: {
                a: {
                  owns__device: { $any: { $alias: "d", $expr: { d: { device_name: "no-such-device" } } } },
                },
              },
            },
          },
        },
      },
    }),
    expected: async () => [],
  },
  {
    name: `application owns__device/any(d:d/device_tag/any(t:t/value eq "${special}"))`,
    params: () => ({
      resource: "application",
      options: {
        $filter: {
          owns__device: {
            $any: {
              $alias: "d",
              $expr: { d: { device_tag: { $any: { $alias: "t", $expr: { t: { value: special } } } } } },
            },
          },
        },
        $select: ["id", "slug"],
      },
    }),
    expected: async (f) =>
      (await appsWhere(f, { Devices: { some: { Tags: { some: { value: special } } } } })).map((row) =>
        pick(row, ["id", "slug"]),
      ),
    unordered: true,
  },
  {
    name: "application owns__device/any(d:d/$eq:[{$:['d','device_name']},'kiosks-05'])",
    params: () => ({
      resource: "application",
      options: {
        $filter: {
          owns__device: { $any: { $alias: "d", $expr: { $eq: [{ $: ["d", "device_name"] }, "kiosks-05"] } } },
        },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await appsWhere(f, { Devices: { some: { device_name: "kiosks-05" } } })).map((row) =>
        pick(row, ["id"]),
      ),
    unordered: true,
  },
  {
    // balena-sdk: getAllByOrganization, and part A's `belongs_to__application/any(bta:bta/slug eq 'o/a')`.
    name: "device belongs_to__application/any(bta:bta/slug eq 'demo/kiosks') (any on a to-one link)",
    params: () => ({
      resource: "device",
      options: {
        $filter: {
          belongs_to__application: { $any: { $alias: "bta", $expr: { bta: { slug: "demo/kiosks" } } } },
        },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { Application: { slug: "demo/kiosks" } })).map((row) => pick(row, ["id"])),
    unordered: true,
  },
  {
    name: "device belongs_to__application/any(a:a/organization/any(o:o/handle eq 'demo')) (nested, to-one)",
    params: () => ({
      resource: "device",
      options: {
        $filter: {
          belongs_to__application: {
            $any: {
              $alias: "a",
              $expr: { a: { organization: { $any: { $alias: "o", $expr: { o: { handle: "demo" } } } } } },
            },
          },
        },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (await devicesWhere(f, { Application: { Organization: { handle: "demo" } } })).map((row) =>
        pick(row, ["id"]),
      ),
    unordered: true,
  },
  {
    name: "device belongs_to__application/any(bta:bta/organization eq N) (balena-sdk getAllByOrganization)",
    params: (f) => ({
      resource: "device",
      options: {
        $orderby: "device_name asc",
        $filter: {
          belongs_to__application: { $any: { $alias: "bta", $expr: { bta: { organization: f.org.id } } } },
        },
        $select: ["id", "device_name"],
      },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          where: { Application: { organization: f.org.id } },
          orderBy: { device_name: "asc" },
        })
      ).map((row) => ({ id: row.id, device_name: row.device_name })),
  },
  {
    // balena-sdk DT: the device type behind an alias.
    name: "device_type device_type_alias/any(dta:dta/is_referenced_by__alias eq 'raspberrypi4-64'), $orderby name, $top 1",
    params: () => ({
      resource: "device_type",
      options: {
        $orderby: "name asc",
        $top: 1,
        $filter: {
          device_type_alias: {
            $any: { $alias: "dta", $expr: { dta: { is_referenced_by__alias: "raspberrypi4-64" } } },
          },
        },
      },
    }),
    expected: async (f) =>
      (
        await f.p.deviceType.findMany({
          include: { CpuArchitecture: true },
          where: { Aliases: { some: { is_referenced_by__alias: "raspberrypi4-64" } } },
          orderBy: [{ name: "asc" }, { id: "asc" }],
          take: 1,
        })
      ).map((row) => wire("device_type", row)),
  },
  // ---- $count inside $filter ---------------------------------------------------------------------
  {
    name: "application {$eq:[{owns__device:{$count:{}}},0]}",
    params: () => ({
      resource: "application",
      options: { $filter: { $eq: [{ owns__device: { $count: {} } }, 0] } },
    }),
    expected: (f) => appsWhere(f, { Devices: { none: {} } }),
    unordered: true,
  },
  {
    name: "application {$gt:[{owns__device:{$count:{$filter:{os_variant:'dev'}}}},6]}",
    params: () => ({
      resource: "application",
      options: {
        $filter: { $gt: [{ owns__device: { $count: { $filter: { os_variant: "dev" } } } }, 6] },
        $select: "id",
      },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          select: { id: true, _count: { select: { Devices: { where: { os_variant: "dev" } } } } },
          orderBy: { id: "asc" },
        })
      )
        .filter((app) => app._count.Devices > 6)
        .map((app) => ({ id: app.id })),
    unordered: true,
  },
  {
    name: "device {$ge:[{device_tag:{$count:{}}},2]}",
    params: () => ({
      resource: "device",
      options: { $filter: { $ge: [{ device_tag: { $count: {} } }, 2] }, $select: "id" },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          select: { id: true, _count: { select: { Tags: true } } },
          orderBy: { id: "asc" },
        })
      )
        .filter((row) => row._count.Tags >= 2)
        .map((row) => ({ id: row.id })),
    unordered: true,
  },
  // ---- $select -----------------------------------------------------------------------------------
  {
    name: "$select:'id'",
    params: () => ({ resource: "device", options: { $select: "id" } }),
    expected: async (f) => (await allDevices(f)).map((row) => ({ id: row.id })),
    unordered: true,
  },
  {
    name: "$select:['id','uuid']",
    params: () => ({ resource: "device", options: { $select: ["id", "uuid"] } }),
    expected: async (f) => (await allDevices(f)).map((row) => ({ id: row.id, uuid: row.uuid })),
    unordered: true,
  },
  {
    name: "$select of links gives {__id} or null",
    params: () => ({
      resource: "device",
      options: { $select: ["id", "belongs_to__application", "should_be_running__release", "actor"] },
    }),
    expected: async (f) =>
      (await allDevices(f)).map((row) => ({
        id: row.id,
        belongs_to__application: { __id: row.belongs_to__application },
        should_be_running__release:
          row.should_be_running__release === null ? null : { __id: row.should_be_running__release },
        actor: row.actor,
      })),
    unordered: true,
  },
  {
    name: "$select:['id','overall_status'] (computed)",
    params: () => ({ resource: "device", options: { $select: ["id", "overall_status"] } }),
    expected: async (f) =>
      (await allDevices(f)).map((row) => ({ id: row.id, overall_status: overallStatus(row) })),
    unordered: true,
  },
  {
    name: "all default fields of every v6 resource read here",
    params: () => ({ resource: "application" }),
    expected: (f) => appsWhere(f, {}),
    unordered: true,
  },
  {
    name: "device_type (catalogue hidden)",
    params: () => ({ resource: "device_type" }),
    expected: async (f) =>
      (await f.p.deviceType.findMany({ include: { CpuArchitecture: true }, orderBy: { id: "asc" } })).map(
        (row) => wire("device_type", row),
      ),
    unordered: true,
  },
  {
    name: "release, all fields",
    params: () => ({ resource: "release" }),
    expected: async (f) =>
      (await f.p.release.findMany({ orderBy: { id: "asc" } })).map((row) => wire("release", row)),
    unordered: true,
  },
  // ---- $expand -----------------------------------------------------------------------------------
  {
    name: "$expand:'belongs_to__application' (always an array)",
    params: (f) => ({
      resource: "device",
      options: {
        $select: "id",
        $expand: "belongs_to__application",
        $filter: { id: { $in: [d(f, 0).id, d(f, 45).id] } },
      },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          where: { id: { in: [d(f, 0).id, d(f, 45).id] } },
          include: { Application: { include: appInclude } },
          orderBy: { id: "asc" },
        })
      ).map((row) => ({ id: row.id, belongs_to__application: [wire("application", row.Application)] })),
    unordered: true,
  },
  {
    name: "$expand:['belongs_to__application','is_of__device_type'] (with all default fields)",
    params: (f) => ({
      resource: "device",
      options: { $expand: ["belongs_to__application", "is_of__device_type"], $filter: { id: d(f, 21).id } },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          where: { id: d(f, 21).id },
          include: {
            Application: { include: appInclude },
            DeviceType: { include: { CpuArchitecture: true } },
          },
        })
      ).map((row) => ({
        ...wire("device", row),
        belongs_to__application: [wire("application", row.Application)],
        is_of__device_type: [wire("device_type", row.DeviceType)],
      })),
  },
  {
    name: "$expand:{belongs_to__application:{}}",
    params: (f) => ({
      resource: "device",
      options: { $select: ["id"], $expand: { belongs_to__application: {} }, $filter: { id: d(f, 30).id } },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          where: { id: d(f, 30).id },
          include: { Application: { include: appInclude } },
        })
      ).map((row) => ({
        id: row.id,
        belongs_to__application: [wire("application", row.Application)],
      })),
  },
  {
    name: "$expand:{belongs_to__application:{$select:'id'}, is_of__device_type:{$select:'slug'}}",
    params: () => ({
      resource: "device",
      options: {
        $select: ["id", "device_name"],
        $expand: { belongs_to__application: { $select: "id" }, is_of__device_type: { $select: "slug" } },
      },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          include: { Application: { select: { id: true } }, DeviceType: { select: { slug: true } } },
          orderBy: { id: "asc" },
        })
      ).map((row) => ({
        id: row.id,
        device_name: row.device_name,
        belongs_to__application: [{ id: row.Application.id }],
        is_of__device_type: [{ slug: row.DeviceType.slug }],
      })),
    unordered: true,
  },
  {
    name: "$expand of a null link is []",
    params: () => ({
      resource: "device",
      options: { $select: ["id"], $expand: { should_be_running__release: { $select: ["id", "commit"] } } },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ include: { PinnedRelease: true }, orderBy: { id: "asc" } })).map(
        (row) => ({
          id: row.id,
          should_be_running__release: row.PinnedRelease
            ? [{ id: row.PinnedRelease.id, commit: row.PinnedRelease.commit }]
            : [],
        }),
      ),
    unordered: true,
  },
  {
    name: "nested $expand with $select/$filter/$orderby/$top/$skip/$expand",
    params: () => ({
      resource: "application",
      options: {
        $select: ["id", "app_name"],
        $expand: {
          owns__device: {
            $select: ["id", "uuid"],
            $filter: { is_online: true },
            $orderby: { id: "desc" },
            $top: 5,
            $skip: 1,
            $expand: { is_of__device_type: { $select: "slug" } },
          },
        },
      },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          include: {
            Devices: {
              where: { is_online: true },
              orderBy: { id: "desc" },
              take: 5,
              skip: 1,
              include: { DeviceType: { select: { slug: true } } },
            },
          },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({
        id: app.id,
        app_name: app.app_name,
        owns__device: app.Devices.map((device) => ({
          id: device.id,
          uuid: device.uuid,
          is_of__device_type: [{ slug: device.DeviceType.slug }],
        })),
      })),
    unordered: true,
  },
  {
    name: "$expand reverse navigation device_tag with $orderby",
    params: (f) => ({
      resource: "device",
      options: {
        $select: "id",
        $filter: { id: { $in: [d(f, 0).id, d(f, 1).id, d(f, 2).id, d(f, 40).id] } },
        $expand: { device_tag: { $select: ["tag_key", "value"], $orderby: "tag_key desc" } },
      },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          where: { id: { in: [d(f, 0).id, d(f, 1).id, d(f, 2).id, d(f, 40).id] } },
          include: { Tags: { orderBy: [{ tag_key: "desc" }, { id: "asc" }] } },
          orderBy: { id: "asc" },
        })
      ).map((row) => ({
        id: row.id,
        device_tag: row.Tags.map((tag) => ({ tag_key: tag.tag_key, value: tag.value })),
      })),
    unordered: true,
  },
  {
    name: "$expand:{owns__device:{$count:{$filter:{is_online:true}}}}",
    params: () => ({
      resource: "application",
      options: { $select: "id", $expand: { owns__device: { $count: { $filter: { is_online: true } } } } },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          select: { id: true, _count: { select: { Devices: { where: { is_online: true } } } } },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({ id: app.id, owns__device: app._count.Devices })),
    unordered: true,
  },
  {
    name: "$expand:{owns__device:{$count:{}}}",
    params: () => ({
      resource: "application",
      options: { $select: "id", $expand: { owns__device: { $count: {} } } },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          select: { id: true, _count: { select: { Devices: true } } },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({ id: app.id, owns__device: app._count.Devices })),
    unordered: true,
  },
  {
    name: "$expand with a lambda filter inside: owns__release($filter=status eq 'success';$orderby=created_at desc;$top=1)",
    params: () => ({
      resource: "application",
      options: {
        $select: "id",
        $expand: {
          owns__release: {
            $select: ["id", "commit"],
            $top: 1,
            $filter: { status: "success" },
            $orderby: "created_at desc",
          },
        },
      },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          include: {
            Releases: {
              where: { status: "success" },
              orderBy: [{ created_at: "desc" }, { id: "asc" }],
              take: 1,
            },
          },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({
        id: app.id,
        owns__release: app.Releases.map((r) => ({ id: r.id, commit: r.commit })),
      })),
    unordered: true,
  },
  // ---- $orderby ----------------------------------------------------------------------------------
  {
    name: "$orderby:'device_name asc'",
    params: () => ({
      resource: "device",
      options: { $orderby: "device_name asc", $select: ["id", "device_name"] },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: { device_name: "asc" } })).map((row) => ({
        id: row.id,
        device_name: row.device_name,
      })),
  },
  {
    name: "$orderby:{device_name:'desc'}",
    params: () => ({
      resource: "device",
      options: { $orderby: { device_name: "desc" }, $select: ["id", "device_name"] },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: { device_name: "desc" } })).map((row) => ({
        id: row.id,
        device_name: row.device_name,
      })),
  },
  {
    name: "$orderby:[{is_online:'desc'},{id:'asc'}]",
    params: () => ({
      resource: "device",
      options: { $orderby: [{ is_online: "desc" }, { id: "asc" }], $select: ["id", "is_online"] },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: [{ is_online: "desc" }, { id: "asc" }] })).map((row) => ({
        id: row.id,
        is_online: row.is_online,
      })),
  },
  {
    // fleetgate's documented choice (scripts/build-odata-parser.mjs): no direction means ascending.
    name: "$orderby:['is_online desc','device_name'] (no direction: asc)",
    params: () => ({
      resource: "device",
      options: { $orderby: ["is_online desc", "device_name"], $select: ["id", "device_name"] },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: [{ is_online: "desc" }, { device_name: "asc" }] })).map(
        (row) => ({
          id: row.id,
          device_name: row.device_name,
        }),
      ),
  },
  {
    name: "$orderby:[{owns__device:{$count:{}},$dir:'asc'},{app_name:'desc'}]",
    params: () => ({
      resource: "application",
      options: {
        $orderby: [{ owns__device: { $count: {} }, $dir: "asc" }, { app_name: "desc" }],
        $select: ["id", "app_name"],
      },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({ orderBy: [{ Devices: { _count: "asc" } }, { app_name: "desc" }] })
      ).map((app) => ({
        id: app.id,
        app_name: app.app_name,
      })),
  },
  {
    name: "$orderby:{owns__device:{$count:{}},$dir:'desc'}",
    params: () => ({
      resource: "application",
      options: { $orderby: { owns__device: { $count: {} }, $dir: "desc" }, $select: "id" },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          select: { id: true, _count: { select: { Devices: true } } },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({ id: app.id, count: app._count.Devices })),
    // Ties between fleets of equal size may come in any order: same rows, counts non-increasing.
    check: (actual, expected) => {
      const counts = new Map((expected as { id: number; count: number }[]).map((e) => [e.id, e.count]));
      const ids = (actual as Row[]).map((row) => row.id as number);
      expect([...ids].sort((a, b) => a - b)).toEqual([...counts.keys()].sort((a, b) => a - b));
      const sequence = ids.map((id) => counts.get(id) as number);
      expect(sequence).toEqual([...sequence].sort((a, b) => b - a));
    },
  },
  {
    name: "$orderby:'belongs_to__application/app_name desc,device_name asc' (path)",
    params: () => ({
      resource: "device",
      options: {
        $orderby: ["belongs_to__application/app_name desc", "device_name asc"],
        $select: ["id", "device_name"],
      },
    }),
    expected: async (f) =>
      (
        await f.p.device.findMany({
          orderBy: [{ Application: { app_name: "desc" } }, { device_name: "asc" }],
        })
      ).map((row) => ({
        id: row.id,
        device_name: row.device_name,
      })),
  },
  {
    name: "$orderby:[{owns__device:{$count:{$filter:{os_variant:'dev'}}},$dir:'desc'},{app_name:'asc'}]",
    params: () => ({
      resource: "application",
      options: {
        $orderby: [
          { owns__device: { $count: { $filter: { os_variant: "dev" } } }, $dir: "desc" },
          { app_name: "asc" },
        ],
        $select: ["id", "app_name"],
      },
    }),
    expected: async (f) =>
      (
        await f.p.application.findMany({
          select: {
            id: true,
            app_name: true,
            _count: { select: { Devices: { where: { os_variant: "dev" } } } },
          },
        })
      )
        .sort((a, b) => b._count.Devices - a._count.Devices || (a.app_name < b.app_name ? -1 : 1))
        .map((app) => ({ id: app.id, app_name: app.app_name })),
  },
  // ---- parameter aliases (@) -----------------------------------------------------------------------
  {
    name: "get by id through a parameter alias: device(@id)?@id=N",
    params: (f) => ({ resource: "device", id: { "@": "id" }, options: { "@id": d(f, 14).id } }),
    expected: async (f) => wire("device", await f.p.device.findUniqueOrThrow({ where: { id: d(f, 14).id } })),
  },
  {
    name: `$filter with a parameter alias: note eq @n&@n='${special}'`,
    params: () => ({
      resource: "device",
      options: { $filter: { note: { "@": "n" } }, "@n": special, $select: ["id", "note"] },
    }),
    expected: async (f) => (await devicesWhere(f, { note: special })).map((row) => pick(row, ["id", "note"])),
    unordered: true,
  },
  // ---- $top / $skip ------------------------------------------------------------------------------
  {
    name: "$orderby id, $top:10, $skip:20",
    params: () => ({ resource: "device", options: { $orderby: "id asc", $top: 10, $skip: 20 } }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: { id: "asc" }, take: 10, skip: 20 })).map((row) =>
        wire("device", row),
      ),
  },
  {
    name: "$top:3 $skip:2 on a sorted collection, option order $skip first",
    params: () => ({
      resource: "device",
      options: { $skip: 2, $top: 3, $orderby: { device_name: "desc" }, $select: "uuid" },
    }),
    expected: async (f) =>
      (await f.p.device.findMany({ orderBy: { device_name: "desc" }, take: 3, skip: 2 })).map((row) => ({
        uuid: row.uuid,
      })),
  },
  {
    name: "$top:0",
    params: () => ({ resource: "device", options: { $top: 0 } }),
    expected: async () => [],
  },
  {
    name: "$skip past the end",
    params: () => ({ resource: "device", options: { $skip: 1000 } }),
    expected: async () => [],
  },
  // ---- /$count -----------------------------------------------------------------------------------
  {
    name: "options:{$count:{}}",
    params: () => ({ resource: "device", options: { $count: {} } }),
    expected: (f) => f.p.device.count(),
  },
  {
    name: "options:{$count:{$filter:{is_online:true}}}",
    params: () => ({ resource: "device", options: { $count: { $filter: { is_online: true } } } }),
    expected: (f) => f.p.device.count({ where: { is_online: true } }),
  },
  {
    name: "release options:{$count:{$filter:{status:'success', belongs_to__application:N}}}",
    params: (f) => ({
      resource: "release",
      options: { $count: { $filter: { status: "success", belongs_to__application: f.apps.weather.id } } },
    }),
    expected: (f) =>
      f.p.release.count({ where: { status: "success", belongs_to__application: f.apps.weather.id } }),
  },
  {
    name: "application options:{$count:{$filter:lambda}}",
    params: () => ({
      resource: "application",
      options: {
        $count: { $filter: { owns__device: { $any: { $alias: "d", $expr: { d: { is_active: false } } } } } },
      },
    }),
    expected: (f) => f.p.application.count({ where: { Devices: { some: { is_active: false } } } }),
  },
  // ---- by key ------------------------------------------------------------------------------------
  {
    name: "get by id",
    params: (f) => ({ resource: "device", id: d(f, 12).id }),
    expected: async (f) => wire("device", await f.p.device.findUniqueOrThrow({ where: { id: d(f, 12).id } })),
  },
  {
    name: "get by id with $select and $expand",
    params: (f) => ({
      resource: "application",
      id: f.apps.kiosks.id,
      options: { $select: ["id", "slug"], $expand: { owns__device: { $select: "id", $orderby: "id asc" } } },
    }),
    expected: async (f) => {
      const app = await f.p.application.findUniqueOrThrow({
        where: { id: f.apps.kiosks.id },
        include: { Devices: { orderBy: { id: "asc" } } },
      });
      return { id: app.id, slug: app.slug, owns__device: app.Devices.map((device) => ({ id: device.id })) };
    },
  },
  {
    name: "get by id, miss → undefined",
    params: () => ({ resource: "device", id: 987654 }),
    expected: async () => undefined,
  },
  {
    name: "get by {uuid:'…'}",
    params: (f) => ({ resource: "device", id: { uuid: d(f, 33).uuid } }),
    expected: async (f) =>
      wire("device", await f.p.device.findUniqueOrThrow({ where: { uuid: d(f, 33).uuid } })),
  },
  {
    name: "get by {uuid:'…'} with options (balena-sdk device.get(U, opts))",
    params: (f) => ({
      resource: "device",
      id: { uuid: d(f, 34).uuid },
      options: { $select: ["id", "device_name"], $expand: { belongs_to__application: { $select: "slug" } } },
    }),
    expected: async (f) => {
      const row = await f.p.device.findUniqueOrThrow({
        where: { uuid: d(f, 34).uuid },
        include: { Application: true },
      });
      return {
        id: row.id,
        device_name: row.device_name,
        belongs_to__application: [{ slug: row.Application.slug }],
      };
    },
  },
  {
    name: "get by {uuid:'…'}, miss → undefined",
    params: () => ({ resource: "device", id: { uuid: "0".repeat(32) } }),
    expected: async () => undefined,
  },
  {
    name: "application get by {slug:'demo/kiosks'} (encoded /)",
    params: (f) => ({ resource: "application", id: { slug: f.apps.kiosks.slug } }),
    expected: async (f) =>
      wire(
        "application",
        await f.p.application.findUniqueOrThrow({ where: { slug: f.apps.kiosks.slug }, include: appInclude }),
      ),
  },
  {
    name: "organization get by {handle:'demo'} with $select",
    params: (f) => ({ resource: "organization", id: { handle: f.org.handle }, options: { $select: "id" } }),
    expected: async (f) => ({
      id: (await f.p.organization.findUniqueOrThrow({ where: { handle: f.org.handle } })).id,
    }),
  },
  {
    name: "device_tag get by composite {device, tag_key}",
    params: (f) => ({ resource: "device_tag", id: { device: d(f, 0).id, tag_key: "location" } }),
    expected: async (f) =>
      wire(
        "device_tag",
        await f.p.deviceTag.findUniqueOrThrow({
          where: { device_tag_key: { device: d(f, 0).id, tag_key: "location" } },
        }),
      ),
  },
  {
    name: `device_tag get by composite key with tag_key "${special}"`,
    params: (f) => ({ resource: "device_tag", id: { device: d(f, 0).id, tag_key: special } }),
    expected: async (f) =>
      wire(
        "device_tag",
        await f.p.deviceTag.findUniqueOrThrow({
          where: { device_tag_key: { device: d(f, 0).id, tag_key: special } },
        }),
      ),
  },
  {
    name: "device_tag get by composite key, miss → undefined",
    params: (f) => ({ resource: "device_tag", id: { device: d(f, 50).id, tag_key: "location" } }),
    expected: async () => undefined,
  },
  {
    name: "release get by composite {belongs_to__application, commit}",
    params: (f) => ({
      resource: "release",
      id: { belongs_to__application: f.release.belongs_to__application, commit: f.release.commit },
    }),
    expected: async (f) =>
      wire("release", await f.p.release.findUniqueOrThrow({ where: { id: f.release.id } })),
  },
  {
    // balena-sdk pinToRelease.
    name: "release lookup: commit, status, application, $select id, $top 1, $orderby created_at desc",
    params: (f) => ({
      resource: "release",
      options: {
        $filter: {
          commit: f.release.commit,
          status: "success",
          belongs_to__application: f.release.belongs_to__application,
        },
        $select: "id",
        $top: 1,
        $orderby: "created_at desc",
      },
    }),
    expected: async (f) =>
      (
        await f.p.release.findMany({
          where: {
            commit: f.release.commit,
            status: "success",
            belongs_to__application: f.release.belongs_to__application,
          },
          orderBy: [{ created_at: "desc" }, { id: "asc" }],
          take: 1,
        })
      ).map((row) => ({ id: row.id })),
  },
];

describe.each(databaseKinds)("pinejs-client-core against the API on %s", (kind) => {
  let server: TestServer;
  let pine: FetchPine;
  let fixture: Fixture;

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const p = server.test.db.prisma;
    const org = await p.organization.findUniqueOrThrow({ where: { handle: "demo" } });
    const app = (slug: string) => p.application.findUniqueOrThrow({ where: { slug } });
    const kiosks = await app("demo/kiosks");
    // An empty fleet: any() and all() differ on it, and its device count is 0.
    const empty = await p.application.create({
      data: {
        app_name: "empty-fleet",
        slug: "demo/empty-fleet",
        Organization: { connect: { id: org.id } },
        DeviceType: { connect: { id: kiosks.is_for__device_type } },
        Actor: { create: {} },
      },
    });
    const devices = await p.device.findMany({ orderBy: { id: "asc" } });
    const tagged = devices.slice(0, 10);
    await p.deviceTag.createMany({
      data: [
        ...tagged.map((device, i) => ({
          device: device.id,
          tag_key: "location",
          value: `Building ${i % 3 === 0 ? "A" : "B"}/Room ${i}`,
        })),
        { device: devices[0]?.id as number, tag_key: special, value: "special-key" },
        { device: devices[1]?.id as number, tag_key: "owner", value: special },
        { device: devices[2]?.id as number, tag_key: "owner", value: nearMiss },
        { device: devices[40]?.id as number, tag_key: "owner", value: special.toUpperCase() },
      ],
    });
    await p.device.update({ where: { id: devices[3]?.id as number }, data: { note: special } });
    const release = await p.release.findFirstOrThrow({
      where: { belongs_to__application: kiosks.id, status: "success" },
      orderBy: { id: "asc" },
    });
    fixture = {
      p,
      org,
      apps: {
        lights: await app("demo/smart-lights"),
        weather: await app("demo/weather-stations"),
        kiosks,
        empty,
      },
      devices,
      release,
    };
    pine = new FetchPine({ apiPrefix: `${server.url}/v6/` });
    pine.authorization = `Bearer ${server.adminKey}`;
  });
  afterAll(() => server.close());

  it.each(cases)("$name", async ({ params, expected, unordered, check }) => {
    const query = params(fixture);
    const url = pine.compile(query);
    const want = await expected(fixture);
    let actual: unknown;
    try {
      actual = await (pine as unknown as { get(p: Params): Promise<unknown> }).get(query);
    } catch (error) {
      throw new Error(`GET /v6/${url} failed: ${(error as Error).message}`);
    }
    if (check) return check(actual, want);
    if (unordered) expect(byId(actual), `GET /v6/${url}`).toEqual(byId(want));
    else expect(actual, `GET /v6/${url}`).toEqual(want);
  });

  it("sends the wire encoding of part A: quotes doubled, string contents %-encoded", async () => {
    const query = { resource: "device_tag", options: { $filter: { value: special } } };
    expect(pine.compile(query)).toBe("device_tag?$filter=value eq 'O''Brien%20%26%20co%2F100%25'");
    const before = pine.sent.length;
    await (pine as unknown as { get(p: Params): Promise<unknown> }).get(query);
    expect(pine.sent.slice(before)).toEqual([
      `GET ${server.url}/v6/device_tag?$filter=value eq 'O''Brien%20%26%20co%2F100%25'`,
    ]);
  });
});
