import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Application, Device, DeviceTag } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import {
  byId,
  deviceFields,
  deviceSelection,
  idsOf,
  iso,
  ReadWorld,
  type Row,
  text,
} from "../support/graphql/graphql-reads.ts";

// GraphQL reads on the fixture of the OData read tests: the selection (scalars, relations, counts,
// aliases, fragments, directives), paging, keys; each root field is one SQL statement.

describe.each(databaseKinds)("GraphQL reads on %s", (kind) => {
  const w = new ReadWorld();
  beforeAll(() => w.start(kind), 180_000);
  afterAll(() => w.close());

  describe("scalars", () => {
    it("every device with Int, String, Boolean, DateTime, link ids and the computed overallStatus", async () => {
      const data = await w.ok<{ devices: Row[] }>(`{ devices { ${deviceSelection} } }`);
      expect(data.devices).toEqual([...w.fx.devices].sort(byId).map(deviceFields));
      // the nullable fields show both shapes
      expect(data.devices.some((d) => d.lastConnectivityEvent === null)).toBe(true);
      expect(data.devices.some((d) => d.isManagedByDeviceId !== null)).toBe(true);
      expect(new Set(data.devices.map((d) => d.overallStatus)).size).toBe(5);
    });

    it("timestamps are ISO 8601 strings with milliseconds, in UTC", async () => {
      const device = w.fx.devices.find((d) => d.last_connectivity_event !== null) as Device;
      const data = await w.ok<{ device: Row }>(
        `{ device(id: ${device.id}) { createdAt lastConnectivityEvent } }`,
      );
      expect(data.device.lastConnectivityEvent).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(data.device).toEqual({
        createdAt: device.created_at.toISOString(),
        lastConnectivityEvent: iso(device.last_connectivity_event),
      });
    });

    it("applications with the computed commit and deviceType", async () => {
      const data = await w.ok<{ applications: Row[] }>(
        "{ applications { id appName slug isPublic commit deviceType organizationId userId dependsOnApplicationId shouldTrackLatestRelease createdAt } }",
      );
      expect(data.applications).toEqual(
        [...w.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          appName: a.app_name,
          slug: a.slug,
          isPublic: a.is_public,
          commit: w.releaseOf(a.should_be_running__release)?.commit ?? null,
          deviceType: w.fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug,
          organizationId: a.organization,
          userId: a.user,
          dependsOnApplicationId: a.depends_on__application,
          shouldTrackLatestRelease: a.should_track_latest_release,
          createdAt: a.created_at.toISOString(),
        })),
      );
    });

    it("JSON fields come out as JSON values", async () => {
      const db = w.server.test.db.prisma;
      const results = [{ deviceId: 1, uuid: "abc", statusCode: 200, ok: true }];
      const made = await db.supervisorCommand.create({
        data: {
          is_issued_by__actor: 1,
          method: "POST",
          path: "/v1/blink",
          data: { force: true, n: [1, 2] },
          results,
        },
      });
      const none = await db.supervisorCommand.create({
        data: { is_issued_by__actor: 1, method: "POST", path: "/v1/reboot", results: [] },
      });
      const data = await w.ok<{ supervisorCommands: Row[] }>(
        "{ supervisorCommands(orderBy: {id: ASC}) { id path data results } }",
      );
      expect(data.supervisorCommands).toEqual([
        { id: made.id, path: "/v1/blink", data: { force: true, n: [1, 2] }, results },
        { id: none.id, path: "/v1/reboot", data: null, results: [] },
      ]);
    });

    it("a JSON field takes no condition: the core compares no JSON value (was offered isNull, then refused)", async () => {
      await w.fails(
        "{ supervisorCommands(where: {data: {isNull: true}}) { id } }",
        "GRAPHQL_VALIDATION_FAILED",
        /data/,
      );
    });
  });

  describe("relations", () => {
    it("to-one relations, and null for an unset link", async () => {
      const data = await w.ok<{ devices: Row[] }>(
        "{ devices { id belongsToApplication { id appName } shouldBeRunningRelease { id semver } } }",
      );
      expect(data.devices).toEqual(
        [...w.fx.devices].sort(byId).map((d) => {
          const app = w.appById(d.belongs_to__application);
          const release = w.releaseOf(d.should_be_running__release);
          return {
            id: d.id,
            belongsToApplication: { id: app.id, appName: app.app_name },
            shouldBeRunningRelease: release ? { id: release.id, semver: release.semver } : null,
          };
        }),
      );
    });

    it("depth 3 with nested where, orderBy, first and offset", async () => {
      const data = await w.ok<{ applications: Row[] }>(`{
        applications(orderBy: {appName: DESC}) {
          id appName
          ownsDevice(where: {isOnline: {eq: true}}, orderBy: {deviceName: DESC}, first: 4, offset: 1) {
            id deviceName
            deviceTag(orderBy: {tagKey: DESC}) {
              tagKey value
              device { id uuid belongsToApplication { slug } }
            }
          }
        }
      }`);
      const expected = [...w.fx.applications]
        .sort((a, b) => text(b.app_name, a.app_name) || a.id - b.id)
        .map((a) => ({
          id: a.id,
          appName: a.app_name,
          ownsDevice: w
            .devicesOf(a)
            .filter((d) => d.is_online)
            .sort((x, y) => text(y.device_name, x.device_name) || x.id - y.id)
            .slice(1, 5)
            .map((d) => ({
              id: d.id,
              deviceName: d.device_name,
              deviceTag: w
                .tagsOf(d)
                .sort((x, y) => text(y.tag_key, x.tag_key) || x.id - y.id)
                .map((t) => ({
                  tagKey: t.tag_key,
                  value: t.value,
                  device: { id: d.id, uuid: d.uuid, belongsToApplication: { slug: a.slug } },
                })),
            })),
        }));
      expect(expected.flatMap((a) => a.ownsDevice.flatMap((d) => d.deviceTag)).length).toBeGreaterThan(0);
      expect(data.applications).toEqual(expected);
    });

    it("a relation's where, orderBy, first and offset from variables", async () => {
      const data = await w.ok<{ applications: Row[] }>(
        `query($w: DeviceWhere, $o: [DeviceOrderBy!], $n: Int, $s: Int) {
          applications { id ownsDevice(where: $w, orderBy: $o, first: $n, offset: $s) { id } ownsDeviceCount(where: $w) }
        }`,
        { w: { isActive: { eq: true } }, o: [{ cpuUsage: "ASC" }], n: 3, s: 1 },
      );
      const usage = (d: Device) => (d.cpu_usage === null ? Number.POSITIVE_INFINITY : d.cpu_usage);
      expect(data.applications).toEqual(
        [...w.fx.applications].sort(byId).map((a) => {
          const active = w.devicesOf(a).filter((d) => d.is_active);
          return {
            id: a.id,
            ownsDevice: idsOf(active.sort((x, y) => usage(x) - usage(y) || x.id - y.id).slice(1, 4)),
            ownsDeviceCount: active.length,
          };
        }),
      );
    });

    it("self-referencing relations both ways, with counts inside", async () => {
      const data = await w.ok<{ applications: Row[] }>(
        "{ applications { id dependsOnApplication { appName } isDependedOnByApplication { appName ownsDeviceCount } } }",
      );
      expect(data.applications).toEqual(
        [...w.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          dependsOnApplication: a.depends_on__application
            ? { appName: w.appById(a.depends_on__application).app_name }
            : null,
          isDependedOnByApplication: w.fx.applications
            .filter((b) => b.depends_on__application === a.id)
            .sort(byId)
            .map((b) => ({ appName: b.app_name, ownsDeviceCount: w.devicesOf(b).length })),
        })),
      );
    });

    it("a device's gateway and the devices it manages", async () => {
      const data = await w.ok<{ devices: Row[] }>(
        "{ devices(where: {managesDevice: {some: {}}}) { id managesDevice { id isManagedByDevice { id } } } }",
      );
      const managed = (d: Device) => w.fx.devices.filter((m) => m.is_managed_by__device === d.id).sort(byId);
      expect(data.devices).toEqual(
        w.fx.devices
          .filter((d) => managed(d).length > 0)
          .sort(byId)
          .map((d) => ({
            id: d.id,
            managesDevice: managed(d).map((m) => ({ id: m.id, isManagedByDevice: { id: d.id } })),
          })),
      );
    });
  });

  describe("counts", () => {
    it("…Count fields, with and without where, ignoring first", async () => {
      const data = await w.ok<{ applications: Row[] }>(`{
        applications {
          id ownsDeviceCount online: ownsDeviceCount(where: {isOnline: {eq: true}}) ownsReleaseCount
          ownsDevice(first: 2) { id deviceTagCount }
        }
      }`);
      expect(data.applications).toEqual(
        [...w.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          ownsDeviceCount: w.devicesOf(a).length,
          online: w.devicesOf(a).filter((d) => d.is_online).length,
          ownsReleaseCount: w.fx.releases.filter((r) => r.belongs_to__application === a.id).length,
          ownsDevice: w
            .devicesOf(a)
            .sort(byId)
            .slice(0, 2)
            .map((d) => ({ id: d.id, deviceTagCount: w.tagsOf(d).length })),
        })),
      );
    });

    it("root xsCount(where), with paths and variables", async () => {
      const data = await w.ok<Row>(
        `query($w: DeviceWhere) {
          devicesCount
          filtered: devicesCount(where: $w)
          applicationsCount(where: {organization: {handle: {eq: "acme"}}})
          deviceTagsCount(where: {tagKey: {eq: "location"}})
        }`,
        { w: { isOnline: { eq: true }, note: { ne: null } } },
      );
      const acme = w.fx.organizations.find((o) => o.handle === "acme");
      expect(data).toEqual({
        devicesCount: w.fx.devices.length,
        filtered: w.fx.devices.filter((d) => d.is_online && d.note !== null).length,
        applicationsCount: w.fx.applications.filter((a) => a.organization === acme?.id).length,
        deviceTagsCount: w.fx.deviceTags.filter((t) => t.tag_key === "location").length,
      });
    });
  });

  describe("paging", () => {
    it.each([
      [{ first: 5 }, 0, 5],
      [{ offset: 35 }, 35, undefined],
      [{ first: 3, offset: 10 }, 10, 13],
      [{ first: 0 }, 0, 0],
      [{ offset: 1000 }, 1000, undefined],
    ] as const)("devices(%j) in id order", async (args, from, to) => {
      const data = await w.ok<{ devices: Row[] }>(
        "query($first: Int, $offset: Int) { devices(first: $first, offset: $offset) { id } }",
        args,
      );
      expect(data.devices).toEqual(idsOf([...w.fx.devices].sort(byId).slice(from, to)));
    });

    it("first and offset after where and orderBy", async () => {
      const data = await w.ok<{ devices: Row[] }>(
        "{ devices(where: {isOnline: {eq: true}}, orderBy: {cpuTemp: ASC}, first: 5, offset: 2) { id } }",
      );
      const temp = (d: Device) => (d.cpu_temp === null ? Number.POSITIVE_INFINITY : d.cpu_temp);
      const expected = w.fx.devices
        .filter((d) => d.is_online)
        .sort((a, b) => temp(a) - temp(b) || a.id - b.id);
      expect(data.devices).toEqual(idsOf(expected.slice(2, 7)));
    });
  });

  describe("single rows by key", () => {
    const device = () => w.fx.devices[4] as Device;

    it("device(id), device(uuid), device(actor)", async () => {
      const d = device();
      const data = await w.ok<Row>(
        `{ byId: device(id: ${d.id}) { id uuid } byUuid: device(uuid: "${d.uuid}") { id uuid } byActor: device(actor: ${d.actor}) { id } }`,
      );
      expect(data).toEqual({
        byId: { id: d.id, uuid: d.uuid },
        byUuid: { id: d.id, uuid: d.uuid },
        byActor: { id: d.id },
      });
    });

    it("application(slug) with a slash, deviceType(slug), organization(handle)", async () => {
      const app = w.fx.applications[1] as Application;
      const type = w.fx.deviceTypes[2];
      const data = await w.ok<Row>(
        'query($slug: String, $type: String) { application(slug: $slug) { id slug } deviceType(slug: $type) { id name } organization(handle: "globex") { name } }',
        { slug: app.slug, type: type?.slug },
      );
      expect(data).toEqual({
        application: { id: app.id, slug: app.slug },
        deviceType: { id: type?.id, name: type?.name },
        organization: { name: "Globex" },
      });
    });

    it("a composite key: deviceTag(deviceId, tagKey)", async () => {
      const tag = w.fx.deviceTags.find((t) => t.tag_key === "k") as DeviceTag;
      const data = await w.ok<Row>(
        `{ deviceTag(deviceId: ${tag.device}, tagKey: "k") { id value createdAt deviceId device { id } } }`,
      );
      expect(data.deviceTag).toEqual({
        id: tag.id,
        value: tag.value,
        createdAt: tag.created_at.toISOString(),
        deviceId: tag.device,
        device: { id: tag.device },
      });
    });

    it.each([
      "device(id: 999999) { id }",
      'device(uuid: "nope") { id }',
      'deviceTag(deviceId: 1, tagKey: "missing") { id }',
      'application(slug: "acme/nothing") { id }',
    ])("a miss is null: %s", async (field) => {
      expect(await w.ok(`{ ${field} }`)).toEqual({ [field.slice(0, field.indexOf("("))]: null });
    });

    it.each([
      ["no key", "device { id }"],
      ["two keys", 'device(id: 1, uuid: "x") { id }'],
      ["half a composite key", 'deviceTag(tagKey: "k") { id }'],
      ["a null key", "device(id: null) { id }"],
    ])("%s is BAD_USER_INPUT", async (_label, field) => {
      const reply = await w.fails(`{ ${field} }`, "BAD_USER_INPUT", /key/);
      expect(reply.status).toBe(200);
    });
  });

  describe("the shape of the query", () => {
    it("aliases: two differently filtered copies of one relation, an aliased scalar, aliased root fields", async () => {
      const data = await w.ok<Row>(
        `{
          first: applications(first: 2) {
            name: appName
            online: ownsDevice(where: {isOnline: {eq: true}}) { id }
            offline: ownsDevice(where: {isOnline: {eq: false}}, orderBy: {id: DESC}) { id key: uuid }
          }
          rest: applications(offset: 2) { appName }
        }`,
      );
      const apps = [...w.fx.applications].sort(byId);
      expect(data).toEqual({
        first: apps.slice(0, 2).map((a) => ({
          name: a.app_name,
          online: idsOf(
            w
              .devicesOf(a)
              .filter((d) => d.is_online)
              .sort(byId),
          ),
          offline: w
            .devicesOf(a)
            .filter((d) => !d.is_online)
            .sort((x, y) => y.id - x.id)
            .map((d) => ({ id: d.id, key: d.uuid })),
        })),
        rest: apps.slice(2).map((a) => ({ appName: a.app_name })),
      });
    });

    it("fragments, nested fragments and inline fragments, merged with plain fields", async () => {
      const data = await w.ok<{ applications: Row[] }>(`
        fragment Tags on Device { deviceTag { tagKey } }
        fragment DeviceBits on Device { id ...Tags belongsToApplication { appName } }
        fragment App on Application { appName ownsDevice(first: 3) { ...DeviceBits deviceName } }
        { applications { id ...App ... on Application { slug ownsDevice(first: 3) { uuid } } } }
      `);
      expect(data.applications).toEqual(
        [...w.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          appName: a.app_name,
          ownsDevice: w
            .devicesOf(a)
            .sort(byId)
            .slice(0, 3)
            .map((d) => ({
              id: d.id,
              deviceTag: w
                .tagsOf(d)
                .sort(byId)
                .map((t) => ({ tagKey: t.tag_key })),
              belongsToApplication: { appName: a.app_name },
              deviceName: d.device_name,
              uuid: d.uuid,
            })),
          slug: a.slug,
        })),
      );
    });

    it("@skip and @include with variables, on fields, relations and fragments", async () => {
      const query = `query($withTags: Boolean!, $noName: Boolean!) {
        devices(first: 3) {
          id
          deviceName @skip(if: $noName)
          deviceTag @include(if: $withTags) { tagKey }
          ... on Device @include(if: $withTags) { deviceTagCount }
          ...Fleet @skip(if: $noName)
        }
      }
      fragment Fleet on Device { belongsToApplication { appName } }`;
      const first3 = [...w.fx.devices].sort(byId).slice(0, 3);
      const on = await w.ok<{ devices: Row[] }>(query, { withTags: true, noName: false });
      expect(on.devices).toEqual(
        first3.map((d) => ({
          id: d.id,
          deviceName: d.device_name,
          deviceTag: w
            .tagsOf(d)
            .sort(byId)
            .map((t) => ({ tagKey: t.tag_key })),
          deviceTagCount: w.tagsOf(d).length,
          belongsToApplication: { appName: w.appById(d.belongs_to__application).app_name },
        })),
      );
      const off = await w.ok<{ devices: Row[] }>(query, { withTags: false, noName: true });
      expect(off.devices).toEqual(idsOf(first3));
    });

    it("__typename at the root, on rows and on relations, and a row of only __typename", async () => {
      const d = w.fx.devices[0] as Device;
      const data = await w.ok<Row>(
        `{ __typename device(id: ${d.id}) { __typename belongsToApplication { __typename } deviceTag(first: 1) { __typename } } onlyType: devices(first: 2) { __typename } }`,
      );
      expect(data).toEqual({
        __typename: "Query",
        device: {
          __typename: "Device",
          belongsToApplication: { __typename: "Application" },
          deviceTag: w.tagsOf(d).length ? [{ __typename: "DeviceTag" }] : [],
        },
        onlyType: [{ __typename: "Device" }, { __typename: "Device" }],
      });
    });

    it("one field requested twice under one key is read once", async () => {
      const d = w.fx.devices[0] as Device;
      const data = await w.ok<Row>(
        `{ device(id: ${d.id}) { id id deviceName ... on Device { deviceName id } } }`,
      );
      expect(data).toEqual({ device: { id: d.id, deviceName: d.device_name } });
    });
  });

  describe("myApplications and applications", () => {
    it("the admin sees every application but has none of their own", async () => {
      const data = await w.ok<Row>(
        "{ applications { id } myApplications { id } myApplicationsCount applicationsCount }",
      );
      expect(data).toEqual({
        applications: idsOf([...w.fx.applications].sort(byId)),
        myApplications: [],
        myApplicationsCount: 0,
        applicationsCount: w.fx.applications.length,
      });
    });
  });
});
