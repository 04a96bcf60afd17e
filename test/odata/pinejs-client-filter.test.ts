import {
  allDevices,
  type Case,
  d,
  describePineCases,
  devicesWhere,
  pick,
  special,
} from "../support/odata/pine-cases.ts";
import { wire } from "../support/odata/pine-wire.ts";

// pinejs-client-core against the API: $filter objects (comparisons, null, dates, $in, $or/$and/$not,
// string functions) and strings with ' & / %.

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
];

describePineCases(cases);
