import { allDevices, appsWhere, type Case, d, describePineCases } from "../support/odata/pine-cases.ts";
import { appInclude, wire } from "../support/odata/pine-wire.ts";
import { overallStatus } from "../support/oracle/oracle.ts";

// pinejs-client-core against the API: $select (links, computed fields, every default field) and
// $expand (nested options, null links, $count).

const cases: Case[] = [
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
];

describePineCases(cases);
