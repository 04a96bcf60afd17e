import type { Params } from "pinejs-client-core";
import { expect, it } from "vitest";
import { type Case, d, describePineCases, devicesWhere, pick, special } from "../support/odata/pine-cases.ts";
import { appInclude, type Row, wire } from "../support/odata/pine-wire.ts";

// pinejs-client-core against the API: $orderby (directions, paths, counts), parameter aliases,
// $top/$skip and /$count; reads by id, by alternate and composite keys, misses; and the wire encoding
// of a string in a $filter.

const cases: Case[] = [
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
  // Issue 19: (belongs_to__application, commit) is unique among a fleet's successful releases only
  // (a failed build and its rebuild share a commit), so it is no key, as in balena's model; balena-sdk
  // finds a release by commit with a $filter, as the next case does.
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

describePineCases(cases, ({ server, pine }) => {
  it("sends the wire encoding of part A: quotes doubled, string contents %-encoded", async () => {
    const query = { resource: "device_tag", options: { $filter: { value: special } } };
    expect(pine().compile(query)).toBe("device_tag?$filter=value eq 'O''Brien%20%26%20co%2F100%25'");
    const before = pine().sent.length;
    await (pine() as unknown as { get(p: Params): Promise<unknown> }).get(query);
    expect(pine().sent.slice(before)).toEqual([
      `GET ${server().url}/v6/device_tag?$filter=value eq 'O''Brien%20%26%20co%2F100%25'`,
    ]);
  });
});
