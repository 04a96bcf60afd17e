import { describe, expect, it } from "vitest";
import { DERIVED, describeOlderVersions, namesIn, type Row, toOld } from "../support/odata/odata-versions.ts";

// API versions v1…v5 through the real server, reads: collections, keys, $select, counts, computed and
// derived fields, and OData v4 JSON, in each older version's names. Every expectation is the same data
// read through v6, renamed in JavaScript (test/support/odata/odata-versions.ts).

describeOlderVersions((versions, version) => {
  const { call, get, rows, expectError } = versions;
  const { dev, app, releaseResource } = namesIn(version);

  describe("read", () => {
    it("a device collection: every default field, renamed, links as {__id} under the old names", async () => {
      const expected = (await rows("v6", `/device?$expand=${DERIVED}&$orderby=id`)).map((row) =>
        toOld(version, "device", row),
      );
      const actual = await rows(version, "/device?$orderby=id");
      expect(actual.length).toBeGreaterThanOrEqual(60);
      expect(actual).toEqual(expected);
      // a link reads {"__id":N} under its old name
      const first = actual[0] as Row;
      expect(first[dev("belongs_to__application")]).toEqual({ __id: expect.any(Number) });
      expect(first.device_type).toEqual(expect.any(String));
      expect(first.is_on__commit).toEqual(expect.any(String));
      expect(first).not.toHaveProperty("is_of__device_type");
      expect(first).not.toHaveProperty("is_running__release");
    });

    it("a device by id and by uuid key", async () => {
      const [v6] = await rows("v6", `/device?$expand=${DERIVED}&$orderby=id&$top=1&$skip=7`);
      const expected = toOld(version, "device", v6 as Row);
      expect(await rows(version, `/device(${(v6 as Row).id})`)).toEqual([expected]);
      expect(await rows(version, `/device(uuid='${(v6 as Row).uuid}')`)).toEqual([expected]);
      expect(await rows(version, `/device(@id)?@id=${(v6 as Row).id}`)).toEqual([expected]);
      expect(await rows(version, "/device(uuid='0000')")).toEqual([]);
    });

    it("fleets and releases (build before v4) read in the old names", async () => {
      const apps = (await rows("v6", "/application?$orderby=id")).map((row) =>
        toOld(version, "application", row),
      );
      expect(await rows(version, "/application?$orderby=id")).toEqual(apps);
      const rel = (await rows("v6", "/release?$orderby=id")).map((row) => toOld(version, "release", row));
      expect(await rows(version, `/${releaseResource}?$orderby=id`)).toEqual(rel);
      const one = rel[2] as Row;
      expect(await rows(version, `/${releaseResource}(${one.id})`)).toEqual([one]);
    });

    it("$select of renamed and derived fields, /$count and $count=true", async () => {
      const v6 = await rows(
        "v6",
        `/device?$select=id,device_name,belongs_to__application&$expand=${DERIVED}&$orderby=id`,
      );
      const expected = v6.map((row) => toOld(version, "device", row));
      const select = `id,${dev("device_name")},${dev("belongs_to__application")},device_type,is_on__commit`;
      expect(await rows(version, `/device?$select=${select}&$orderby=id`)).toEqual(expected);

      const filter = `belongs_to__application/app_name eq 'kiosks'`;
      const count = await get("v6", `/device/$count?$filter=${filter}`);
      expect(count).toBeGreaterThanOrEqual(20);
      expect(
        await get(version, `/device/$count?$filter=${dev("belongs_to__application")}/app_name eq 'kiosks'`),
      ).toBe(count);
      const inline = await call(
        version,
        "GET",
        `/device?$count=true&$top=2&$select=id&$filter=${dev("belongs_to__application")}/app_name eq 'kiosks'`,
      );
      expect(inline.status, inline.raw).toBe(200);
      expect((inline.body as Row)["@odata.count"]).toBe(count);
      expect(inline.headers["x-sql-statements"]).toBe("1");
    });

    it("overall_status (a computed field) can be selected, filtered and ordered", async () => {
      const v6 = await rows(
        "v6",
        "/device?$select=id,device_name,overall_status&$filter=overall_status ne 'idle'&$orderby=overall_status desc,device_name",
      );
      const expected = v6.map((row) => toOld(version, "device", row));
      const n = dev("device_name");
      expect(
        await rows(
          version,
          `/device?$select=id,${n},overall_status&$filter=overall_status ne 'idle'&$orderby=overall_status desc,${n}`,
        ),
      ).toEqual(expected);
    });
  });

  it("derived fields inside lambdas and expansions, $select=*, and keys", async () => {
    const apps6 = await rows(
      "v6",
      "/application?$select=id&$filter=owns__device/any(d:d/is_of__device_type/slug eq 'intel-nuc' and d/is_running__release/commit ne null)",
    );
    const apps = await rows(
      version,
      `/application?$select=id&$filter=${app("owns__device")}/any(d:d/device_type eq 'intel-nuc' and d/is_on__commit ne null)`,
    );
    expect(apps).toEqual(apps6);
    expect(apps.length).toBe(1);

    const sorted6 = await rows(
      "v6",
      "/application?$select=id&$orderby=id&$expand=owns__device($select=id;$orderby=is_running__release/commit desc,device_name;$top=5)",
    );
    const sorted = await rows(
      version,
      `/application?$select=id&$orderby=id&$expand=${app("owns__device")}($select=id;$orderby=is_on__commit desc,${dev("device_name")};$top=5)`,
    );
    expect(sorted).toEqual(sorted6.map((row) => toOld(version, "application", row)));

    const star = await rows(version, "/device?$select=*&$orderby=id&$top=3");
    expect(star).toEqual(await rows(version, "/device?$orderby=id&$top=3"));

    await expectError(version, "GET", "/device(device_type='intel-nuc')", 400);
    await expectError(version, "GET", `/device(${dev("device_name")}='kiosks-01')`, 400);
  });

  it("OData v4 JSON (OData-Version: 4.0) answers in this version's names", async () => {
    const path = `/device?$select=id,${dev("device_name")},${dev("belongs_to__application")},device_type&$orderby=id&$top=3&$expand=${dev("should_be_running__release")}($select=id)`;
    const response = await versions.server.app.inject({
      method: "GET",
      url: `/${version}${path}`,
      headers: { "odata-version": "4.0" },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["x-sql-statements"]).toBe("1");
    const body = JSON.parse(response.body) as { "@odata.context": string; value: Row[] };
    expect(body["@odata.context"]).toContain(`/${version}/$metadata#device`);
    const v6 = await versions.server.app.inject({
      method: "GET",
      url: `/v6/device?$select=id,device_name,belongs_to__application&$orderby=id&$top=3&$expand=should_be_running__release($select=id),is_of__device_type($select=slug)`,
      headers: { "odata-version": "4.0" },
    });
    const expected = (JSON.parse(v6.body) as { value: Row[] }).value.map((row) => {
      const { is_of__device_type: type, ...rest } = row;
      const old = toOld(version, "device", rest);
      return { ...old, device_type: (type as Row | null)?.slug ?? null };
    });
    expect(body.value).toEqual(expected);
  });
});
