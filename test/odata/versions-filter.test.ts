import { describe, expect, it } from "vitest";
import { DERIVED, describeOlderVersions, namesIn, toOld } from "../support/odata/odata-versions.ts";

// API versions v1…v5 through the real server, $filter and $orderby through renamed fields, paths,
// lambdas and derived fields. Every expectation is the same data read through v6, renamed in
// JavaScript (test/support/odata/odata-versions.ts).

describeOlderVersions((versions, version) => {
  const { releases, rows } = versions;
  const { dev, app } = namesIn(version);

  describe("filter", () => {
    it("renamed fields and to-one paths in $filter", async () => {
      const v6 = await rows(
        "v6",
        `/device?$expand=${DERIVED}&$filter=belongs_to__application/app_name eq 'smart-lights' and (startswith(device_name,'smart-lights-1') or is_online eq false)&$orderby=id`,
      );
      expect(v6.length).toBeGreaterThan(0);
      const actual = await rows(
        version,
        `/device?$filter=${dev("belongs_to__application")}/app_name eq 'smart-lights' and (startswith(${dev("device_name")},'smart-lights-1') or is_online eq false)&$orderby=id`,
      );
      expect(actual).toEqual(v6.map((row) => toOld(version, "device", row)));
    });

    it("derived v5 fields (device_type, is_on__commit) filter as the link's slug and commit", async () => {
      const commit = releases("weather-stations")[0]?.commit as string;
      const v6 = await rows(
        "v6",
        `/device?$expand=${DERIVED}&$filter=is_of__device_type/slug eq 'raspberrypi3' and is_running__release/commit eq '${commit}'&$orderby=id`,
      );
      expect(v6.length).toBeGreaterThan(0);
      const actual = await rows(
        version,
        `/device?$filter=device_type eq 'raspberrypi3' and is_on__commit eq '${commit}'&$orderby=id`,
      );
      expect(actual).toEqual(v6.map((row) => toOld(version, "device", row)));
      expect(actual.every((row) => row.device_type === "raspberrypi3" && row.is_on__commit === commit)).toBe(
        true,
      );
      // in (…) and functions on a derived field
      const both = await rows(
        version,
        `/device?$select=id&$filter=device_type in ('raspberrypi3', 'intel-nuc') and contains(is_on__commit,'${commit.slice(3, 9)}')&$orderby=id`,
      );
      const both6 = await rows(
        "v6",
        `/device?$select=id&$filter=is_of__device_type/slug in ('raspberrypi3', 'intel-nuc') and contains(is_running__release/commit,'${commit.slice(3, 9)}')&$orderby=id`,
      );
      expect(both).toEqual(both6);
    });

    it("any/all and $count through renamed (reverse) navigations", async () => {
      // device → its fleet → the fleet's devices (reverse navigation, `device` in v2)
      const v6 = await rows(
        "v6",
        "/device?$select=id,device_name&$filter=belongs_to__application/owns__device/any(d:d/device_name eq 'kiosks-03')&$orderby=id",
      );
      expect(v6.length).toBeGreaterThanOrEqual(20);
      const actual = await rows(
        version,
        `/device?$select=id,${dev("device_name")}&$filter=${dev("belongs_to__application")}/${app("owns__device")}/any(d:d/${dev("device_name")} eq 'kiosks-03')&$orderby=id`,
      );
      expect(actual).toEqual(v6.map((row) => toOld(version, "device", row)));

      const apps = await rows(
        version,
        `/application?$select=id,app_name&$filter=${app("owns__device")}/$count($filter=is_online eq true) gt 14 and ${app("owns__release")}/any(r:r/status eq 'failed') and ${app("owns__device")}/all(d:d/${dev("belongs_to__application")}/app_name eq 'weather-stations' or d/is_on__commit ne null)&$orderby=id`,
      );
      const apps6b = await rows(
        "v6",
        "/application?$select=id,app_name&$filter=owns__device/$count($filter=is_online eq true) gt 14 and owns__release/any(r:r/status eq 'failed') and owns__device/all(d:d/belongs_to__application/app_name eq 'weather-stations' or d/is_running__release/commit ne null)&$orderby=id",
      );
      expect(apps).toEqual(apps6b);
      expect(apps.map((row) => row.app_name)).toContain("weather-stations");

      // nested lambdas with variables of renamed resources
      const nested6 = await rows(
        "v6",
        "/application?$select=id&$filter=owns__release/any(r:r/is_running_on__device/any(d:d/device_name eq 'smart-lights-05' and d/belongs_to__application/app_name eq 'smart-lights'))",
      );
      expect(nested6.length).toBe(1);
      const nested = await rows(
        version,
        `/application?$select=id&$filter=${app("owns__release")}/any(r:r/is_running_on__device/any(d:d/${dev("device_name")} eq 'smart-lights-05' and d/${dev("belongs_to__application")}/app_name eq 'smart-lights'))`,
      );
      expect(nested).toEqual(nested6);
    });

    it("$orderby on renamed fields, to-one paths, derived fields and nav/$count", async () => {
      const v6 = await rows(
        "v6",
        "/device?$select=id&$orderby=is_of__device_type/slug desc,is_running__release/commit,belongs_to__application/app_name,device_name desc",
      );
      const actual = await rows(
        version,
        `/device?$select=id&$orderby=device_type desc,is_on__commit,${dev("belongs_to__application")}/app_name,${dev("device_name")} desc`,
      );
      expect(actual).toEqual(v6);
      const apps6 = await rows(
        "v6",
        "/application?$select=id&$orderby=owns__device/$count($filter=is_online eq false) desc,app_name",
      );
      const apps = await rows(
        version,
        `/application?$select=id&$orderby=${app("owns__device")}/$count($filter=is_online eq false) desc,app_name`,
      );
      expect(apps).toEqual(apps6);
    });
  });
});
