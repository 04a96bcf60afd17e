import { describe, expect, it } from "vitest";
import { DERIVED, describeOlderVersions, namesIn, type Row, toOld } from "../support/odata/odata-versions.ts";

// API versions v1…v5 through the real server, $expand through renamed navigations, nested, with
// options and counts. Every expectation is the same data read through v6, renamed in JavaScript
// (test/support/odata/odata-versions.ts).

describeOlderVersions((versions, version) => {
  const { rows } = versions;
  const { dev, app, releaseResource } = namesIn(version);

  describe("expand", () => {
    it("a fleet's devices and releases, with nested options in old names", async () => {
      const v6 = await rows(
        "v6",
        `/application?$orderby=id&$expand=owns__device($select=id,device_name,belongs_to__application;$filter=is_online eq true and startswith(device_name,'k') eq false;$orderby=device_name desc;$top=4;$count=true;$expand=${DERIVED}),owns__release($orderby=created_at desc;$top=2)`,
      );
      const expected = v6.map((row) => {
        const old = toOld(version, "application", row);
        // `$count=true` inside an expansion: "<nav>@odata.count" under the old name
        const counted = old["owns__device@odata.count"];
        delete old["owns__device@odata.count"];
        old[`${app("owns__device")}@odata.count`] = counted;
        return old;
      });
      const n = dev("device_name");
      const actual = await rows(
        version,
        `/application?$orderby=id&$expand=${app("owns__device")}($select=id,${n},${dev("belongs_to__application")},device_type,is_on__commit;$filter=is_online eq true and startswith(${n},'k') eq false;$orderby=${n} desc;$top=4;$count=true),${app("owns__release")}($orderby=created_at desc;$top=2)`,
      );
      expect(actual).toEqual(expected);
      expect((actual[0] as Row)[app("owns__device")]).toHaveLength(4);
    });

    it("a device's fleet and target release (to-one expansions replace the {__id})", async () => {
      const v6 = await rows(
        "v6",
        `/device?$orderby=id&$top=15&$expand=belongs_to__application($select=id,app_name,depends_on__application),should_be_running__release($select=id,commit),${DERIVED}`,
      );
      const expected = v6.map((row) => toOld(version, "device", row));
      const actual = await rows(
        version,
        `/device?$orderby=id&$top=15&$expand=${dev("belongs_to__application")}($select=id,app_name,${app("depends_on__application")}),${dev("should_be_running__release")}($select=id,commit)`,
      );
      expect(actual).toEqual(expected);
      expect(actual.some((row) => (row[dev("should_be_running__release")] as Row[]).length === 1)).toBe(true);
    });

    it("nested renamed expansions: application(device(application)) and counts", async () => {
      const v6 = await rows(
        "v6",
        "/device?$select=id&$filter=device_name eq 'kiosks-02'&$expand=belongs_to__application($select=app_name;$expand=owns__device($select=device_name;$orderby=device_name;$top=3;$expand=belongs_to__application($select=id)))",
      );
      const expected = v6.map((row) => toOld(version, "device", row));
      const n = dev("device_name");
      const link = dev("belongs_to__application");
      const devices = app("owns__device");
      const actual = await rows(
        version,
        `/device?$select=id&$filter=${n} eq 'kiosks-02'&$expand=${link}($select=app_name;$expand=${devices}($select=${n};$orderby=${n};$top=3;$expand=${link}($select=id)))`,
      );
      expect(actual).toEqual(expected);
      expect((((actual[0] as Row)[link] as Row[])[0] as Row)[devices]).toHaveLength(3);

      // nav/$count in $expand: a number under the old name
      const counts6 = await rows(
        "v6",
        "/application?$select=id&$orderby=id&$expand=owns__device/$count($filter=is_online eq true and startswith(device_name,'s')),owns__release/$count",
      );
      const counts = await rows(
        version,
        `/application?$select=id&$orderby=id&$expand=${devices}/$count($filter=is_online eq true and startswith(${n},'s')),${app("owns__release")}/$count`,
      );
      expect(counts).toEqual(counts6.map((row) => toOld(version, "application", row)));
      expect(counts.map((row) => row[devices])).toEqual(counts6.map((row) => row.owns__device));
    });

    it("releases (builds) expand their devices and fleet", async () => {
      const v6 = await rows(
        "v6",
        `/release?$orderby=id&$top=4&$expand=belongs_to__application($select=app_name),is_running_on__device($select=id,device_name,belongs_to__application;$orderby=device_name;$top=2;$expand=${DERIVED})`,
      );
      const expected = v6.map((row) => toOld(version, "release", row));
      const actual = await rows(
        version,
        `/${releaseResource}?$orderby=id&$top=4&$expand=belongs_to__application($select=app_name),is_running_on__device($select=id,${dev("device_name")},${dev("belongs_to__application")},device_type,is_on__commit;$orderby=${dev("device_name")};$top=2)`,
      );
      expect(actual).toEqual(expected);
    });
  });
});
