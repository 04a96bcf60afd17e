import { describe, expect, it } from "vitest";
import type { Application, Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, idsOf, useODataReads } from "../support/odata/odata-reads.ts";

// OData reads, paths in $filter: to-one paths, any/all over to-many navigations, and nav/$count. Every
// expectation is computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort
// and map the arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, expectDevices, appById, devicesOf, tagsOf } = reads;

  describe("paths in $filter", () => {
    const appNamed = (name: string) => reads.fx.applications.find((a) => a.app_name === name) as Application;

    it("to-one: belongs_to__application/app_name eq 'weather'", async () => {
      await expectDevices(
        "belongs_to__application/app_name eq 'weather'",
        (d) => d.belongs_to__application === appNamed("weather").id,
      );
    });

    it("to-one, depth 2: belongs_to__application/organization/handle eq 'globex'", async () => {
      const globex = reads.fx.organizations.find((o) => o.handle === "globex");
      await expectDevices(
        "belongs_to__application/organization/handle eq 'globex'",
        (d) => appById(d.belongs_to__application).organization === globex?.id,
      );
    });

    it("to-one through a nullable link: is_running__release/status eq 'failed'", async () => {
      const failed = (d: Device) =>
        reads.fx.releases.find((r) => r.id === d.is_running__release)?.status === "failed";
      await expectDevices("is_running__release/status eq 'failed'", failed);
      await expectDevices("not (is_running__release/status eq 'failed')", (d) => !failed(d));
      await expectDevices("is_running__release/status ne 'failed'", (d) => !failed(d));
    });

    it("to-one compared with a column of the row: is_running__release/id eq should_be_running__release", async () => {
      await expectDevices(
        "is_running__release/id eq should_be_running__release",
        (d) => d.is_running__release === d.should_be_running__release,
      );
    });

    async function expectApplications(filter: string, predicate: (a: Application) => boolean) {
      const body = await ok(`/application?$select=id&$filter=${filter}`);
      expect(body).toEqual({ d: idsOf(reads.fx.applications.filter(predicate).sort(byId)) });
    }

    it("to-many any(): owns__device/any(d:d/is_online eq true)", async () => {
      await expectApplications("owns__device/any(d:d/is_online eq true)", (a) =>
        devicesOf(a).some((d) => d.is_online),
      );
    });

    it("to-many all(): owns__device/all(d:d/is_online eq false)", async () => {
      await expectApplications("owns__device/all(d:d/is_online eq false)", (a) =>
        devicesOf(a).every((d) => !d.is_online),
      );
    });

    it("all() with a null-valued body counts as false: owns__device/all(d:d/cpu_temp gt 30)", async () => {
      await expectApplications("owns__device/all(d:d/cpu_temp gt 30)", (a) =>
        devicesOf(a).every((d) => d.cpu_temp !== null && d.cpu_temp > 30),
      );
    });

    it("nested any() with two variables, referring to the outer one", async () => {
      await expectApplications(
        "owns__device/any(d:d/device_tag/any(t:t/tag_key eq 'alias' and t/value eq d/device_name))",
        (a) =>
          devicesOf(a).some((d) => tagsOf(d).some((t) => t.tag_key === "alias" && t.value === d.device_name)),
      );
    });

    it("a bare name inside a lambda is the filtered row's: owns__device/all(d:d/is_of__device_type eq is_for__device_type)", async () => {
      await expectApplications("owns__device/all(d:d/is_of__device_type eq is_for__device_type)", (a) =>
        devicesOf(a).every((d) => d.is_of__device_type === a.is_for__device_type),
      );
    });

    it("any() on device: device_tag/any(t:t/tag_key eq 'location')", async () => {
      await expectDevices("device_tag/any(t:t/tag_key eq 'location')", (d) =>
        tagsOf(d).some((t) => t.tag_key === "location"),
      );
    });

    it("$count in a filter: owns__device/$count gt 10", async () => {
      await expectApplications("owns__device/$count gt 10", (a) => devicesOf(a).length > 10);
    });

    it("$count with its own filter: owns__device/$count($filter=is_online eq true) eq 0", async () => {
      await expectApplications(
        "owns__device/$count($filter=is_online eq true) eq 0",
        (a) => devicesOf(a).filter((d) => d.is_online).length === 0,
      );
    });

    it("$count of a device's tags: device_tag/$count ge 2", async () => {
      await expectDevices("device_tag/$count ge 2", (d) => tagsOf(d).length >= 2);
    });
  });
});
