import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The OData v4 protocol beside the pinejs wire format (issue 31): negotiation as OData v4 Protocol
// §8.2 has it, an entity by key, resource paths, and v4 answers to writes. Expected rows come from
// Prisma; pinejs answers are guarded by ./format-pinejs.test.ts and the client tests.

const maxVersion = { "odata-maxversion": "4.0" };
type Row = Record<string, unknown>;

describe.each(databaseKinds)("OData v4 protocol on %s", (kind) => {
  let server: TestServer;
  let pinned: { id: number; uuid: string; device_name: string; application: number; release: number };
  let unpinned: { id: number };
  let fleet: { id: number; devices: number[] };

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const prisma = server.test.db.prisma;
    const device = await prisma.device.findFirstOrThrow({
      where: { should_be_running__release: { not: null } },
      orderBy: { id: "asc" },
    });
    pinned = {
      id: device.id,
      uuid: device.uuid,
      device_name: device.device_name,
      application: device.belongs_to__application,
      release: device.should_be_running__release as number,
    };
    unpinned = await prisma.device.findFirstOrThrow({
      where: { should_be_running__release: null },
      orderBy: { id: "asc" },
    });
    const devices = await prisma.device.findMany({
      where: { belongs_to__application: pinned.application },
      orderBy: { id: "asc" },
    });
    fleet = { id: pinned.application, devices: devices.map((row) => row.id) };
    expect(fleet.devices.length).toBeGreaterThan(1);
  });
  afterAll(() => server.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    server.app.inject({ method: "GET", url, headers });
  const body = (response: { body: string }) => JSON.parse(response.body) as Row;

  describe("negotiation", () => {
    const v4Signals: { name: string; url: string; headers: Record<string, string> }[] = [
      { name: "OData-MaxVersion: 4.0", url: "", headers: { "odata-maxversion": "4.0" } },
      { name: "OData-MaxVersion: 4.01", url: "", headers: { "odata-maxversion": "4.01" } },
      { name: "OData-Version: 4.0", url: "", headers: { "odata-version": "4.0" } },
      {
        name: "Accept with odata.metadata",
        url: "",
        headers: { accept: "application/json;odata.metadata=minimal" },
      },
      {
        name: "Accept with odata.streaming only",
        url: "",
        headers: { accept: "application/json;odata.streaming=true" },
      },
      {
        name: "$format=json;odata.metadata=minimal",
        url: "&$format=json;odata.metadata=minimal",
        headers: {},
      },
      {
        name: "$format=application/json;odata.metadata=minimal",
        url: "&$format=application/json;odata.metadata=minimal",
        headers: {},
      },
    ];
    it.each(v4Signals)("$name → OData v4 JSON", async ({ url, headers }) => {
      const response = await get(`/v6/application?$select=id&$orderby=id&$top=2${url}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["odata-version"]).toBe("4.0");
      expect(response.headers["content-type"]).toMatch(/^application\/json; ?odata\.metadata="?minimal"?/);
      expect(Object.keys(body(response))).toEqual(["@odata.context", "value"]);
    });

    const pinejsSignals: { name: string; headers: Record<string, string> }[] = [
      { name: "nothing", headers: {} },
      { name: "OData-MaxVersion: 3.0", headers: { "odata-maxversion": "3.0" } },
      { name: "Accept: application/json", headers: { accept: "application/json" } },
      { name: "Accept: */*", headers: { accept: "*/*" } },
    ];
    it.each(pinejsSignals)("$name → pinejs's {d:[…]}", async ({ headers }) => {
      const response = await get("/v6/application?$select=id&$orderby=id&$top=2", headers);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["odata-version"]).toBeUndefined();
      expect(Object.keys(body(response))).toEqual(["d"]);
    });

    it("an error says so in the negotiated format", async () => {
      const v4 = await get("/v6/device?$select=nope", maxVersion);
      expect([v4.statusCode, v4.headers["odata-version"]]).toEqual([400, "4.0"]);
      expect((body(v4).error as Row).message).toMatch(/nope/);
      const pinejs = await get("/v6/device?$select=nope");
      expect(typeof JSON.parse(pinejs.body)).toBe("string");
    });
  });

  describe("an entity by key", () => {
    it("is the entity, its context ending in /$entity, with its links as <link>__id", async () => {
      const response = await get(
        `/v6/device(${pinned.id})?$select=id,uuid,belongs_to__application`,
        maxVersion,
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["x-sql-statements"]).toBe("1");
      expect(body(response)).toStrictEqual({
        "@odata.context": "/v6/$metadata#device/$entity",
        // The entity's ETag (odata-v4-etags.test.ts), as its header says.
        "@odata.etag": response.headers.etag,
        id: pinned.id,
        uuid: pinned.uuid,
        belongs_to__application__id: pinned.application,
      });
    });

    it("by an alternate key too, with an expansion beside the link's id", async () => {
      const response = await get(
        `/v6/device(uuid='${pinned.uuid}')?$select=id,should_be_running__release&$expand=should_be_running__release($select=id)`,
        maxVersion,
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(body(response)).toStrictEqual({
        "@odata.context": "/v6/$metadata#device/$entity",
        "@odata.etag": response.headers.etag,
        id: pinned.id,
        should_be_running__release__id: pinned.release,
        should_be_running__release: { id: pinned.release },
      });
    });

    it("a key that matches nothing is 404 (pinejs: {d:[]})", async () => {
      const v4 = await get("/v6/device(987654)", maxVersion);
      expect(v4.statusCode).toBe(404);
      expect((body(v4).error as Row).code).toBe("NOT_FOUND");
      expect(body(await get("/v6/device(987654)"))).toStrictEqual({ d: [] });
    });
  });

  describe("server-driven paging", () => {
    const pages = async (first: string, size: number) => {
      const ids: unknown[] = [];
      const sizes: number[] = [];
      let url: string | undefined = first;
      while (url !== undefined) {
        const response = await get(url, { ...maxVersion, prefer: `odata.maxpagesize=${size}` });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.headers["preference-applied"]).toBe(`odata.maxpagesize=${size}`);
        const page = body(response);
        const rows = page.value as Row[];
        ids.push(...rows.map((row) => row.id));
        sizes.push(rows.length);
        const next = page["@odata.nextLink"] as string | undefined;
        url = next === undefined ? undefined : `${new URL(next).pathname}${new URL(next).search}`;
      }
      return { ids, sizes };
    };

    it("Prefer: odata.maxpagesize=N gives pages of N linked by @odata.nextLink", async () => {
      const all = (await server.test.db.prisma.device.findMany({ orderBy: { id: "asc" } })).map(
        (row) => row.id,
      );
      const { ids, sizes } = await pages("/v6/device?$select=id&$orderby=id&$count=true", 17);
      expect(ids).toEqual(all);
      expect(sizes.slice(0, -1).every((size) => size === 17)).toBe(true);
    });

    it("shares a $top and a $skip out over the pages", async () => {
      const all = (await server.test.db.prisma.device.findMany({ orderBy: { id: "desc" } })).map(
        (row) => row.id,
      );
      const { ids, sizes } = await pages("/v6/device?$select=id&$orderby=id desc&$skip=3&$top=10", 4);
      expect(sizes).toEqual([4, 4, 2]);
      expect(ids).toEqual(all.slice(3, 13));
    });

    // The statement tells whether another page follows (one row past the page, counted and left
    // out): every page's members, in order, are the unpaged read's, whatever the size and order.
    it.each([
      ["/v6/device?$select=id,device_name&$orderby=device_name desc", [1, 2, 5, 1000]],
      ["/v6/device?$select=id&$expand=belongs_to__application($select=app_name)&$orderby=is_online", [3, 7]],
      ["/v6/application?$select=id&$expand=owns__device($select=id;$orderby=id desc)&$count=true", [2, 4]],
      ["/v6/device?$select=id&$filter=id lt 0", [3]],
    ])("%s: the pages hold the unpaged read's entities, sizes %j", async (url, sizes) => {
      const whole = body(await get(url, maxVersion));
      const all = whole.value as Row[];
      for (const size of sizes) {
        const seen: Row[] = [];
        let next: string | undefined = url;
        while (next !== undefined) {
          const response = await get(next, { ...maxVersion, prefer: `odata.maxpagesize=${size}` });
          expect(response.statusCode, response.body).toBe(200);
          const page = body(response);
          expect(page["@odata.count"]).toBe(whole["@odata.count"]);
          const rows = page.value as Row[];
          expect(rows.length).toBeLessThanOrEqual(size);
          seen.push(...rows);
          const link = page["@odata.nextLink"] as string | undefined;
          // A page that ends the entities has no link, and a link always leads to entities.
          if (seen.length === all.length) expect(link).toBeUndefined();
          else expect(rows).toHaveLength(size);
          next = link === undefined ? undefined : `${new URL(link).pathname}${new URL(link).search}`;
        }
        expect(seen).toStrictEqual(all);
      }
    });
  });

  describe("odata.metadata=full|none", () => {
    it("full: each entity's type, id, edit link and navigation links, expansions too", async () => {
      const response = await get(
        `/v6/device(${pinned.id})?$select=id&$expand=belongs_to__application($select=id)`,
        { accept: "application/json;odata.metadata=full" },
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/odata\.metadata="?full"?/);
      const entity = body(response);
      expect(entity).toMatchObject({
        "@odata.context": "/v6/$metadata#device/$entity",
        "@odata.type": "#fleetgate.device",
        "@odata.id": `device(${pinned.id})`,
        "@odata.editLink": `device(${pinned.id})`,
        id: pinned.id,
        "belongs_to__application@odata.navigationLink": `device(${pinned.id})/belongs_to__application`,
        "device_tag@odata.navigationLink": `device(${pinned.id})/device_tag`,
      });
      expect(entity.belongs_to__application).toMatchObject({
        "@odata.id": `application(${pinned.application})`,
        id: pinned.application,
      });
      expect(Object.keys(entity)[0]).toBe("@odata.context");
    });

    it("none: no context; the count and the rows stay", async () => {
      const response = await get(
        "/v6/application?$select=id&$top=1&$count=true&$format=json;odata.metadata=none",
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/odata\.metadata="?none"?/);
      expect(Object.keys(body(response))).toEqual(["@odata.count", "value"]);
    });

    it("another level is 400", async () => {
      const response = await get("/v6/application?$top=1", {
        accept: "application/json;odata.metadata=most",
      });
      expect(response.statusCode).toBe(400);
      expect((body(response).error as Row).message).toMatch(/odata.metadata=most/);
    });
  });

  describe("resource paths", () => {
    it("device(1)/belongs_to__application is the fleet, in one statement", async () => {
      const response = await get(`/v6/device(${pinned.id})/belongs_to__application?$select=id`, maxVersion);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["x-sql-statements"]).toBe("1");
      expect(body(response)).toStrictEqual({
        "@odata.context": "/v6/$metadata#application/$entity",
        id: pinned.application,
      });
    });

    it("a null to-one navigation is 204", async () => {
      const response = await get(`/v6/device(${unpinned.id})/should_be_running__release`, maxVersion);
      expect(response.statusCode, response.body).toBe(204);
      expect(response.body).toBe("");
    });

    it("application(1)/owns__device is the collection, with the URL's options and @odata.count", async () => {
      const response = await get(
        `/v6/application(${fleet.id})/owns__device?$select=id&$orderby=id desc&$top=2&$count=true`,
        maxVersion,
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(body(response)).toStrictEqual({
        "@odata.context": "/v6/$metadata#device",
        "@odata.count": fleet.devices.length,
        value: [...fleet.devices]
          .reverse()
          .slice(0, 2)
          .map((id) => ({ id })),
      });
    });

    it("a property, its $value (also without negotiation), and a key inside the path", async () => {
      const property = await get(`/v6/device(${pinned.id})/device_name`, maxVersion);
      expect(property.statusCode, property.body).toBe(200);
      expect(body(property)).toStrictEqual({
        "@odata.context": `/v6/$metadata#device(${pinned.id})/device_name`,
        value: pinned.device_name,
      });
      for (const headers of [maxVersion, {}]) {
        const raw = await get(`/v6/device(${pinned.id})/device_name/$value`, headers);
        expect(raw.statusCode, raw.body).toBe(200);
        expect(raw.headers["content-type"]).toMatch(/^text\/plain/);
        expect(raw.body).toBe(pinned.device_name);
      }
      const nested = await get(
        `/v6/application(${fleet.id})/owns__device(${pinned.id})/belongs_to__application__id/$value`,
        maxVersion,
      );
      expect([nested.statusCode, nested.body]).toEqual([200, String(fleet.id)]);
      const elsewhere = await get(
        `/v6/application(${fleet.id})/owns__device(987654)/device_name`,
        maxVersion,
      );
      expect(elsewhere.statusCode).toBe(404);
    });

    it("$count of a collection: text/plain in v4, {d:N} in pinejs", async () => {
      const v4 = await get(`/v6/application(${fleet.id})/owns__device/$count`, maxVersion);
      expect([v4.statusCode, v4.headers["content-type"], v4.body]).toEqual([
        200,
        expect.stringMatching(/^text\/plain/),
        String(fleet.devices.length),
      ]);
      const pinejs = await get(`/v6/application(${fleet.id})/owns__device/$count`);
      expect(body(pinejs)).toStrictEqual({ d: fleet.devices.length });
    });

    it("$ref: the entity's id, or the ids of a collection", async () => {
      const one = await get(`/v6/device(${pinned.id})/belongs_to__application/$ref`, maxVersion);
      expect(body(one)).toStrictEqual({
        "@odata.context": "/v6/$metadata#$ref",
        "@odata.id": `application(${pinned.application})`,
      });
      const many = await get(`/v6/application(${fleet.id})/owns__device/$ref?$orderby=id&$top=1`, maxVersion);
      expect(body(many)).toStrictEqual({
        "@odata.context": "/v6/$metadata#Collection($ref)",
        value: [{ "@odata.id": `device(${fleet.devices[0]})` }],
      });
    });

    it("reads with the caller's permissions: a device a guest cannot see is 404 at any depth", async () => {
      const guest = { ...maxVersion, authorization: "" };
      expect((await get(`/v6/device(${pinned.id})/device_name/$value`, guest)).statusCode).toBe(404);
      expect((await get(`/v6/device(${pinned.id})/belongs_to__application`, guest)).statusCode).toBe(404);
    });

    it.each([
      {
        url: "/v6/device(1)/no_such_thing",
        message: /Unknown navigation or property 'no_such_thing' of device/,
      },
      { url: "/v6/application(1)/owns__device/device_name", message: /owns__device is a collection/ },
      { url: "/v6/device(1)/belongs_to__application(2)", message: /takes no key/ },
      { url: "/v6/device/belongs_to__application", message: /needs a key/ },
      { url: "/v6/device(1)/$value", message: /\$value follows a property/ },
      { url: "/v6/application(1)/owns__device(uuid='x',id=1)", message: /is not a key of device/ },
    ])("refuses $url with 400", async ({ url, message }) => {
      const response = await get(url, maxVersion);
      expect(response.statusCode, response.body).toBe(400);
      expect((body(response).error as Row).message).toMatch(message);
    });

    it("pinejs callers keep their 400 for navigations in the path", async () => {
      const response = await get(`/v6/device(${pinned.id})/belongs_to__application`);
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body)).toMatch(/navigation in the resource path/);
    });
  });

  describe("writes", () => {
    const send = (method: string, url: string, payload: unknown, headers: Record<string, string> = {}) =>
      server.app.inject({ method: method as "POST", url, payload: payload as object, headers });

    it("POST: 201, Location and the entity; a link set by @odata.bind or by its id property", async () => {
      const bound = await send(
        "POST",
        "/v6/device",
        { "belongs_to__application@odata.bind": `application(${fleet.id})`, device_name: "v4-bound" },
        maxVersion,
      );
      expect(bound.statusCode, bound.body).toBe(201);
      expect(bound.headers["odata-version"]).toBe("4.0");
      const created = body(bound);
      expect(created).toMatchObject({
        "@odata.context": "/v6/$metadata#device/$entity",
        device_name: "v4-bound",
        belongs_to__application__id: fleet.id,
      });
      expect(bound.headers.location).toBe(`/v6/device(${created.id})`);
      const byId = await send(
        "POST",
        "/v6/device",
        { belongs_to__application__id: fleet.id, device_name: "v4-by-id" },
        maxVersion,
      );
      expect(byId.statusCode, byId.body).toBe(201);
      expect(body(byId).belongs_to__application__id).toBe(fleet.id);
      const minimal = await send(
        "POST",
        "/v6/device",
        { belongs_to__application__id: fleet.id },
        { ...maxVersion, prefer: "return=minimal" },
      );
      expect(minimal.statusCode, minimal.body).toBe(204);
      expect(minimal.headers["odata-entityid"]).toMatch(/^\/v6\/device\(\d+\)$/);
    });

    it("PATCH moves a link by @odata.bind", async () => {
      const other = await server.test.db.prisma.application.findFirstOrThrow({
        where: {
          id: { not: fleet.id },
          organization: (
            await server.test.db.prisma.application.findUniqueOrThrow({ where: { id: fleet.id } })
          ).organization,
        },
      });
      const created = body(
        await send("POST", "/v6/device", { belongs_to__application__id: fleet.id }, maxVersion),
      );
      const moved = await send(
        "PATCH",
        `/v6/device(${created.id})`,
        { "belongs_to__application@odata.bind": `/v6/application(${other.id})` },
        { ...maxVersion, prefer: "return=representation" },
      );
      expect(moved.statusCode, moved.body).toBe(200);
      expect(body(moved).belongs_to__application__id).toBe(other.id);
    });

    it("@odata.bind names one entity of the navigation's target", async () => {
      for (const bind of ["release(1)", "application", 5]) {
        const response = await send(
          "POST",
          "/v6/device",
          { "belongs_to__application@odata.bind": bind },
          maxVersion,
        );
        expect(response.statusCode, response.body).toBe(400);
        expect((body(response).error as Row).message).toMatch(/belongs_to__application@odata.bind/);
      }
    });

    it("PATCH: 204, or the entity with Prefer: return=representation; DELETE: 204", async () => {
      const created = body(
        await send("POST", "/v6/device", { belongs_to__application__id: fleet.id }, maxVersion),
      );
      const url = `/v6/device(${created.id})`;
      const patched = await send("PATCH", url, { device_name: "v4-patched" }, maxVersion);
      expect([patched.statusCode, patched.body]).toEqual([204, ""]);
      expect(patched.headers["odata-version"]).toBe("4.0");
      const represented = await send(
        "PATCH",
        url,
        { note: "seen" },
        { ...maxVersion, prefer: "return=representation" },
      );
      expect(represented.statusCode, represented.body).toBe(200);
      expect(represented.headers["preference-applied"]).toBe("return=representation");
      expect(body(represented)).toMatchObject({
        "@odata.context": "/v6/$metadata#device/$entity",
        id: created.id,
        device_name: "v4-patched",
        note: "seen",
      });
      const deleted = await send("DELETE", url, undefined, maxVersion);
      expect([deleted.statusCode, deleted.body]).toEqual([204, ""]);
      expect((await get(url, maxVersion)).statusCode).toBe(404);
    });

    it("a write the caller may not make is v4's 403 (pinejs: 401)", async () => {
      const v4 = await send("POST", "/v6/device", { belongs_to__application__id: 987654 }, maxVersion);
      expect(v4.statusCode, v4.body).toBe(403);
      expect((body(v4).error as Row).code).toBe("FORBIDDEN");
      const pinejs = await send("POST", "/v6/device", { belongs_to__application: 987654 });
      expect(pinejs.statusCode, pinejs.body).toBe(401);
    });

    it('pinejs writes answer as before: 201 with {__id} links, PATCH 200 "OK"', async () => {
      const created = await send("POST", "/v6/device", { belongs_to__application: fleet.id });
      expect(created.statusCode, created.body).toBe(201);
      expect(body(created).belongs_to__application).toStrictEqual({ __id: fleet.id });
      const patched = await send("PATCH", `/v6/device(${body(created).id})`, { note: "x" });
      expect([patched.statusCode, patched.body]).toEqual([200, '"OK"']);
    });
  });
});
