import {
  appsWhere,
  type Case,
  describePineCases,
  devicesWhere,
  pick,
  special,
} from "../support/odata/pine-cases.ts";
import { wire } from "../support/odata/pine-wire.ts";

// pinejs-client-core against the API: $filter objects with $any and $all (nested, and on to-one
// links), and $count inside $filter.

const cases: Case[] = [
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
];

describePineCases(cases);
