import { describe, expect, it } from "vitest";
import {
  describeOlderVersions,
  hasBuild,
  keysDeep,
  oldName,
  parseMetadata,
  type Row,
  renames,
  resourceName,
  v4Names,
} from "../support/odata/odata-versions.ts";

// API versions v1…v5 through the real server, the names each version shows and refuses, in answers and
// in $metadata; v2's (and v1's) and v5's own. Every expectation is the same data read through v6,
// renamed in JavaScript (test/support/odata/odata-versions.ts).

describeOlderVersions(
  (versions, version) => {
    const { fleetId, rows, expectError, metadata } = versions;

    describe("names of other versions", () => {
      it("v6 names (and later ones) are unknown: 400 for fields, 404 for resources", async () => {
        await expectError(version, "GET", "/device?$select=is_of__device_type", 400);
        await expectError(version, "GET", "/device?$filter=is_running__release/commit eq 'x'", 400);
        await expectError(version, "GET", "/device?$expand=is_of__device_type", 400);
        await expectError(version, "GET", "/device?$orderby=is_running__release", 400);
        if (version !== "v5") await expectError(version, "GET", "/my_application", 404);
        else
          expect(await rows(version, "/my_application?$select=id")).toEqual(
            await rows("v6", "/my_application?$select=id"),
          );
        if (hasBuild(version)) {
          await expectError(version, "GET", "/release", 404);
          await expectError(version, "GET", "/device?$select=device_name", 400);
          await expectError(version, "GET", "/device?$select=should_be_running__release", 400);
          await expectError(version, "GET", "/application?$expand=owns__release", 400);
          await expectError(version, "GET", "/device?$orderby=device_name", 400);
          await expectError(version, "POST", "/release", 404, { commit: "x" });
        } else {
          await expectError(version, "GET", "/build", 404);
          await expectError(version, "GET", "/device?$select=name", 400);
          await expectError(version, "GET", "/device?$select=should_be_running__build", 400);
        }
        if (version === "v2" || version === "v1") {
          await expectError(version, "GET", "/device?$select=belongs_to__application", 400);
          await expectError(
            version,
            "GET",
            "/device?$filter=belongs_to__application/app_name eq 'kiosks'",
            400,
          );
          await expectError(version, "GET", "/application?$expand=owns__device", 400);
          await expectError(version, "GET", "/application?$filter=owns__device/any(d:d/name eq 'x')", 400);
          await expectError(version, "GET", "/device?$select=is_accessible_by_support_until__date", 400);
          await expectError(version, "POST", "/device", 400, { belongs_to__application: fleetId("kiosks") });
          await expectError(version, "GET", "/device(uuid='x')?$select=belongs_to__user", 400);
        } else {
          await expectError(version, "GET", "/device?$select=application", 400);
          await expectError(version, "GET", "/application?$expand=device", 400);
          await expectError(version, "GET", "/device?$select=support_expiry_date", 400);
        }
        // a derived field is not a navigation
        await expectError(version, "GET", "/device?$expand=device_type", 400);
        await expectError(version, "GET", "/device?$filter=device_type/slug eq 'x'", 400);
      });
    });

    it("$metadata lists this version's names only, as v6's renamed", async () => {
      const v6 = parseMetadata(await metadata("v6"));
      const expected = new Map<string, string[]>();
      for (const [entity, members] of v6) {
        if (entity === "my_application" && version !== "v5") continue;
        // Releases gained tags with v4 (when builds became releases).
        if (entity === "release_tag" && hasBuild(version)) continue;
        const table = entity === "my_application" ? "application" : entity;
        const names = renames(version, table);
        const renamed = members
          .filter(
            (member) =>
              !(
                table === "device" &&
                (member.startsWith("nav:is_of__device_type:") ||
                  member.startsWith("prop:is_of__device_type__id:") ||
                  member.startsWith("nav:is_running__release:") ||
                  member.startsWith("prop:is_running__release__id:"))
              ) && !(table === "release" && hasBuild(version) && member.startsWith("nav:release_tag:")),
          )
          .map((member) => {
            const [kind, name, type] = member.split(":") as [string, string, string];
            const newType =
              hasBuild(version) && /\.release\)?$/.test(type)
                ? type.replace(/\.release(\)?)$/, ".build$1")
                : type;
            return `${kind}:${oldName(names, name)}:${newType}`;
          });
        if (table === "device") renamed.push("prop:device_type:Edm.String", "prop:is_on__commit:Edm.String");
        expected.set(resourceName(version, entity), renamed.sort());
      }
      const actual = parseMetadata(await metadata(version));
      expect(Object.fromEntries([...actual].map(([name, members]) => [name, [...members].sort()]))).toEqual(
        Object.fromEntries(expected),
      );
    });
  },
  (versions) => {
    const { fleetId, rows, expectError, metadata } = versions;

    describe("v2 (and v1, its alias)", () => {
      // The table renames links only on device and application, so a v2 build keeps
      // `belongs_to__application` and a v2 fleet keeps `should_be_running__release`: the absence of v4+
      // names is asserted on devices (wherever they appear) and on fleets' device/build navigations.
      it.each(["v2", "v1"])(
        "%s: a client sees name, application, build and no v4+ names",
        async (version) => {
          const devices = [
            ...(await rows(version, "/device?$top=3")),
            ...(await rows(
              version,
              "/device?$top=2&$expand=should_be_running__build,application($select=id)",
            )),
            ...(await rows(version, "/application?$select=id&$expand=device($top=2)")).flatMap(
              (fleet) => fleet.device as Row[],
            ),
            ...(await rows(version, "/build?$select=id&$expand=is_running_on__device($top=1)")).flatMap(
              (build) => build.is_running_on__device as Row[],
            ),
          ];
          const deviceKeys = new Set(devices.flatMap((device) => Object.keys(device)));
          for (const name of ["name", "application", "device", "user", "should_be_running__build"]) {
            expect(deviceKeys.has(name), name).toBe(true);
          }
          for (const name of [
            "device_name",
            "belongs_to__application",
            "belongs_to__user",
            "is_managed_by__device",
            "should_be_running__release",
            "is_of__device_type",
            "is_running__release",
            "is_accessible_by_support_until__date",
          ]) {
            expect(deviceKeys.has(name), name).toBe(false);
          }
          const fleets = await rows(
            version,
            "/application?$expand=device($top=1;$select=id),owns__build($top=1;$select=id)",
          );
          const fleetKeys = keysDeep(fleets);
          for (const name of ["device", "owns__build", "application"])
            expect(fleetKeys.has(name), name).toBe(true);
          for (const name of ["owns__release", "owns__device", "depends_on__application"]) {
            expect(fleetKeys.has(name), name).toBe(false);
          }
          await expectError(version, "GET", "/application?$expand=owns__release", 400);

          const xml = await metadata(version);
          const types = parseMetadata(xml);
          expect(types.has("build")).toBe(true);
          expect(types.has("release")).toBe(false);
          expect(types.has("my_application")).toBe(false);
          expect(xml).not.toContain("fleetgate.release");
          const deviceMembers = (types.get("device") ?? []).map((member) => member.split(":")[1]);
          expect(deviceMembers).toEqual(
            expect.arrayContaining(["name", "application", "should_be_running__build"]),
          );
          for (const name of v4Names) expect(deviceMembers, name).not.toContain(name);
          const fleetMembers = (types.get("application") ?? []).map((member) => member.split(":")[1]);
          expect(fleetMembers).toEqual(expect.arrayContaining(["device", "owns__build", "application"]));
          for (const name of ["owns__release", "owns__device", "depends_on__application"]) {
            expect(fleetMembers, name).not.toContain(name);
          }
          expect(xml).toContain('NavigationProperty Name="application" Type="fleetgate.application"');
        },
      );

      it("v2 application($expand=device($select=name)) equals v6 owns__device($select=device_name)", async () => {
        const v6 = await rows(
          "v6",
          "/device?$select=id&$filter=device_name eq 'kiosks-07'&$expand=belongs_to__application($select=app_name;$expand=owns__device($select=device_name;$orderby=device_name))",
        );
        const v2 = await rows(
          "v2",
          "/device?$select=id&$filter=name eq 'kiosks-07'&$expand=application($select=app_name;$expand=device($select=name;$orderby=name))",
        );
        expect(v2).toEqual([
          {
            id: v6[0]?.id,
            application: [
              {
                app_name: "kiosks",
                device: (
                  (((v6[0] as Row).belongs_to__application as Row[])[0] as Row).owns__device as Row[]
                ).map((d) => ({
                  name: d.device_name,
                })),
              },
            ],
          },
        ]);
        expect(
          ((((v2[0] as Row).application as Row[])[0] as Row).device as Row[]).length,
        ).toBeGreaterThanOrEqual(20);
      });

      it("v2 application/device/any(d:d/name eq …): every device of that device's fleet", async () => {
        const v2 = await rows(
          "v2",
          "/device?$select=id,name,application&$filter=application/device/any(d:d/name eq 'weather-stations-11')&$orderby=name",
        );
        const v6 = await rows(
          "v6",
          `/device?$select=id,device_name,belongs_to__application&$filter=belongs_to__application eq ${fleetId("weather-stations")}&$orderby=device_name`,
        );
        expect(v2).toEqual(
          v6.map((row) => ({ id: row.id, name: row.device_name, application: row.belongs_to__application })),
        );
        expect(v2.length).toBeGreaterThanOrEqual(20);
      });
    });

    describe("v5", () => {
      it("a v5 client sees device_type and is_on__commit as text", async () => {
        const [device] = await rows("v5", "/device?$filter=device_name eq 'kiosks-04'");
        expect(typeof device?.device_type).toBe("string");
        expect(device?.device_type).toBe("intel-nuc");
        expect(typeof device?.is_on__commit).toBe("string");
        expect(device?.is_on__commit).toMatch(/^[0-9a-f]{32}$/);
        const xml = await metadata("v5");
        expect(xml).toMatch(/<Property Name="device_type" Type="Edm.String"/);
        expect(xml).toMatch(/<Property Name="is_on__commit" Type="Edm.String"/);
        expect(xml).not.toContain('NavigationProperty Name="is_of__device_type"');
        expect(xml).not.toContain('NavigationProperty Name="is_running__release"');
        await expectError("v5", "GET", "/device?$select=is_of__device_type", 400);
      });

      it("v6 has no device_type or is_on__commit on a device, and no build", async () => {
        await expectError("v6", "GET", "/device?$select=device_type", 400);
        await expectError("v6", "GET", "/device?$select=is_on__commit", 400);
        await expectError("v6", "GET", "/build", 404);
        // v7 is served (test/odata/version-v7.test.ts); a version above it is not.
        await expectError("v8", "GET", "/device", 404);
      });
    });
  },
);
