import { OData } from "@odata/client";
import { o } from "odata";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Two generic OData v4 client libraries from npm, over real HTTP, as a reporting tool or a script
// would use them (issue 31): @odata/client and o.js (`odata`). Each reads, filters, expands, pages
// through @odata.nextLink, counts, creates, updates and deletes. Neither knows pinejs: each only
// announces OData v4 with OData-MaxVersion, as the protocol asks of a client.

interface Device {
  "@odata.etag"?: string;
  id: number;
  device_name: string;
  note: string | null;
  belongs_to__application__id: number;
  belongs_to__application?: { id: number; app_name: string };
}

describe.each(databaseKinds)("generic OData v4 clients on %s", (kind) => {
  let server: TestServer;
  let fleet: { id: number; app_name: string; devices: number[] };
  let allDevices: number[];

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const prisma = server.test.db.prisma;
    const application = await prisma.application.findFirstOrThrow({
      where: { Devices: { some: {} } },
      orderBy: { id: "asc" },
      include: { Devices: { orderBy: { id: "asc" } } },
    });
    fleet = {
      id: application.id,
      app_name: application.app_name,
      devices: application.Devices.map((device) => device.id),
    };
    allDevices = (await prisma.device.findMany({ orderBy: { id: "asc" } })).map((device) => device.id);
  }, 180_000);
  afterAll(() => server.close());

  const v4Headers = () => ({ "OData-MaxVersion": "4.0", Authorization: `Bearer ${server.adminKey}` });

  describe("@odata/client", () => {
    const client = (extra: Record<string, string> = {}) =>
      OData.New4({ serviceEndpoint: `${server.url}/v6/`, commonHeaders: { ...v4Headers(), ...extra } });

    it("reads by key and filters, selects, orders and expands", async () => {
      const devices = client().getEntitySet<Device>("device");
      const one = await devices.retrieve(fleet.devices[0]);
      expect(one).toMatchObject({ id: fleet.devices[0], belongs_to__application__id: fleet.id });
      const filter = client().newFilter().field("belongs_to__application__id").eq(fleet.id);
      const found = await devices.query(
        client().newOptions().filter(filter).select(["id", "device_name"]).orderby("id", "asc"),
      );
      expect(found.map((device) => device.id)).toEqual(fleet.devices);
      const expanded = await devices.query(
        client()
          .newOptions()
          .filter(filter)
          .top(2)
          .orderby("id", "asc")
          .expand("belongs_to__application($select=id,app_name)" as keyof Device),
      );
      expect(expanded.map((device) => device.belongs_to__application)).toEqual([
        { id: fleet.id, app_name: fleet.app_name },
        { id: fleet.id, app_name: fleet.app_name },
      ]);
    });

    it("counts, and pages through @odata.nextLink", async () => {
      const api = client();
      const filter = api.newFilter().field("belongs_to__application__id").eq(fleet.id);
      expect(await api.getEntitySet<Device>("device").count(filter)).toBe(fleet.devices.length);
      const paged = client({ Prefer: "odata.maxpagesize=9" });
      const endpoint = `${server.url}/v6/`;
      const ids: number[] = [];
      let page = (await paged.newRequest({
        collection: "device",
        params: paged.newOptions().select("id").orderby("id", "asc"),
      })) as unknown as { value: Device[]; "@odata.nextLink"?: string };
      for (;;) {
        ids.push(...page.value.map((device) => device.id));
        const next = page["@odata.nextLink"];
        if (next === undefined) break;
        expect(next.startsWith(endpoint)).toBe(true);
        page = (await paged.newRequest({
          collection: next.slice(endpoint.length),
        })) as unknown as typeof page;
      }
      expect(ids).toEqual(allDevices);
    });

    it("creates, updates and deletes", async () => {
      const devices = client().getEntitySet<Device & { "belongs_to__application@odata.bind"?: string }>(
        "device",
      );
      const created = await devices.create({
        device_name: "from-odata-client",
        "belongs_to__application@odata.bind": `application(${fleet.id})`,
      });
      expect(created).toMatchObject({
        device_name: "from-odata-client",
        belongs_to__application__id: fleet.id,
      });
      await devices.update(created.id, { note: "updated by @odata/client" });
      expect(await devices.retrieve(created.id)).toMatchObject({ note: "updated by @odata/client" });
      await devices.delete(created.id);
      await expect(devices.retrieve(created.id)).rejects.toThrow(/No entity has this key/);
    });

    it("reads an entity's @odata.etag, and an update with a stale If-Match is refused", async () => {
      const devices = client().getEntitySet<Device>("device");
      const created = await devices.create({
        device_name: "etag-odata-client",
        belongs_to__application__id: fleet.id,
      });
      const read = await devices.retrieve(created.id);
      expect(read["@odata.etag"]).toMatch(/^W\/"[0-9a-f]{32}"$/);
      await client({ "If-Match": read["@odata.etag"] as string })
        .getEntitySet<Device>("device")
        .update(created.id, { note: "first" });
      await expect(
        client({ "If-Match": read["@odata.etag"] as string })
          .getEntitySet<Device>("device")
          .update(created.id, { note: "second" }),
      ).rejects.toThrow(/ETag does not match/);
      expect(await devices.retrieve(created.id)).toMatchObject({ note: "first" });
      await devices.delete(created.id);
    });
  });

  describe("o.js (odata)", () => {
    const api = (extra: Record<string, string> = {}) =>
      o(`${server.url}/v6/`, {
        headers: { ...v4Headers(), "Content-Type": "application/json", ...extra },
      });

    it("reads by key and filters, selects, orders and expands", async () => {
      const one = (await api().get(`device(${fleet.devices[0]})`).query()) as Device;
      expect(one).toMatchObject({ id: fleet.devices[0], belongs_to__application__id: fleet.id });
      const found = (await api()
        .get("device")
        .query({
          $filter: `belongs_to__application__id eq ${fleet.id}`,
          $select: "id,device_name",
          $orderby: "id",
        })) as Device[];
      expect(found.map((device) => device.id)).toEqual(fleet.devices);
      const expanded = (await api()
        .get("device")
        .query({
          $filter: `belongs_to__application/app_name eq '${fleet.app_name}'`,
          $expand: "belongs_to__application($select=app_name)",
          $select: "id",
          $orderby: "id desc",
          $top: 1,
        })) as Device[];
      expect(expanded).toEqual([
        {
          id: fleet.devices[fleet.devices.length - 1],
          belongs_to__application: { app_name: fleet.app_name },
        },
      ]);
    });

    it("counts, and pages through @odata.nextLink", async () => {
      const counted = (await (
        (await api()
          .get("device")
          .fetch({
            $count: true,
            $top: 0,
            $filter: `belongs_to__application__id eq ${fleet.id}`,
          })) as Response
      ).json()) as { "@odata.count": number };
      expect(counted["@odata.count"]).toBe(fleet.devices.length);
      // o.js reads a plain-text body as JSON where it can: the count is a number.
      expect(await api().get(`application(${fleet.id})/owns__device/$count`).query()).toBe(
        fleet.devices.length,
      );
      const ids: number[] = [];
      let response = (await api({ Prefer: "odata.maxpagesize=11" })
        .get("device")
        .fetch({ $select: "id", $orderby: "id" })) as Response;
      for (;;) {
        const page = (await response.json()) as { value: Device[]; "@odata.nextLink"?: string };
        ids.push(...page.value.map((device) => device.id));
        const next = page["@odata.nextLink"];
        if (next === undefined) break;
        response = (await o(next, { headers: { ...v4Headers(), Prefer: "odata.maxpagesize=11" } })
          .get()
          .fetch()) as Response;
      }
      expect(ids).toEqual(allDevices);
    });

    it("creates, updates and deletes", async () => {
      const created = (await api()
        .post("device", { belongs_to__application__id: fleet.id, device_name: "from-o.js" })
        .query()) as Device;
      expect(created).toMatchObject({ device_name: "from-o.js", belongs_to__application__id: fleet.id });
      const patched = (await api()
        .patch(`device(${created.id})`, { note: "updated by o.js" })
        .fetch()) as Response;
      expect(patched.status).toBe(204);
      const note = (await api().get(`device(${created.id})/note/$value`).fetch()) as Response;
      expect(await note.text()).toBe("updated by o.js");
      const deleted = (await api().delete(`device(${created.id})`).fetch()) as Response;
      expect(deleted.status).toBe(204);
      const missing = await api()
        .get(`device(${created.id})`)
        .query()
        .catch((error: unknown) => error);
      expect((missing as Response).status).toBe(404);
    });

    it("binds through $ref, and writes with If-Match", async () => {
      const created = (await api()
        .post("device", { belongs_to__application__id: fleet.id, device_name: "ref-o.js" })
        .query()) as Device;
      const release = await server.test.db.prisma.release.findFirstOrThrow({
        where: { belongs_to__application: fleet.id, status: "success" },
      });
      // Pin the device to a release of its fleet: PUT the link's $ref, read it back, DELETE it.
      const ref = `device(${created.id})/should_be_running__release/$ref`;
      const put = (await api()
        .put(ref, { "@odata.id": `release(${release.id})` })
        .fetch()) as Response;
      expect(put.status, await put.clone().text()).toBe(204);
      expect(await api().get(ref).query()).toMatchObject({ "@odata.id": `release(${release.id})` });
      expect(((await api().delete(ref).fetch()) as Response).status).toBe(204);
      const read = (await api().get(`device(${created.id})`).fetch()) as Response;
      const etag = read.headers.get("etag") as string;
      expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
      const fresh = (await api({ "If-Match": etag })
        .patch(`device(${created.id})`, { note: "with If-Match" })
        .fetch()) as Response;
      expect(fresh.status).toBe(204);
      const stale = await api({ "If-Match": etag })
        .patch(`device(${created.id})`, { note: "too late" })
        .fetch()
        .catch((error: unknown) => error);
      expect((stale as Response).status).toBe(412);
      expect(((await api().delete(`device(${created.id})`).fetch()) as Response).status).toBe(204);
    });
  });
});
