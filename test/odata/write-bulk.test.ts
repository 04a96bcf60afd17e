import { describe, expect, it } from "vitest";
import type { Device, Organization } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, link, odataWrites, type Row } from "../support/odata/odata-writes.ts";

// Writes over many rows: x-dry-run reports what a write would change and changes nothing; a bulk PATCH
// or DELETE changes exactly the rows its $filter matches, checked row by row.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const {
    server,
    fixture,
    world,
    basicWorld,
    call,
    rows,
    one,
    snapshot,
    expectOk,
    expectError,
    billingEventsOf,
  } = odataWrites(kind, { fixture: true });

  // ---- dry run ---------------------------------------------------------------------------------------

  describe("x-dry-run", () => {
    const dry = { "x-dry-run": "true" };

    it("a bulk PATCH reports exactly its target rows with before/after and changes nothing", async () => {
      const { w, fleet } = await basicWorld("drypatch");
      const devices: Device[] = [];
      for (let i = 0; i < 6; i++) devices.push(await w.device(fleet, { note: i % 2 ? `n${i}` : null }));
      const all = devices.map((d) => d.id);
      const before = await snapshot("device", all);
      // targets: odd notes, or the first device
      const targets = devices.filter((d, i) => d.note !== null || i === 0).sort(byId);
      const filter = `belongs_to__application eq ${fleet.id} and (note ne null or id eq ${devices[0]?.id})`;
      const reply = await call("PATCH", `/device?$filter=${filter}`, { note: "dry" }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe(String(targets.length));
      const report = reply.body as { dryRun: boolean; affected: number; changes: Row[] };
      expect({
        ...report,
        changes: [...report.changes].sort((a, b) => (a.id as number) - (b.id as number)),
      }).toEqual({
        dryRun: true,
        affected: targets.length,
        changes: targets.map((d) => ({ id: d.id, before: { note: d.note }, after: { note: "dry" } })),
      });
      expect(await snapshot("device", all)).toEqual(before);
    });

    it("a PUT reports the replaced fields and changes nothing", async () => {
      const { w, fleet, release } = await basicWorld("dryput");
      const device = await w.device(fleet, { note: "n", pin: release, name: "name" });
      const before = await one("device", device.id);
      const reply = await call("PUT", `/device(${device.id})`, { device_name: "other" }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe("1");
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [
          {
            id: device.id,
            before: { device_name: "name", note: "n", should_be_running__release: link(release.id) },
            after: { device_name: "other", note: null, should_be_running__release: null },
          },
        ],
      });
      expect(await one("device", device.id)).toEqual(before);
    });

    it("a bulk DELETE reports each target row as a GET shows it and deletes nothing", async () => {
      const { w, fleet } = await basicWorld("drydelete");
      const devices: Device[] = [];
      for (let i = 0; i < 5; i++) devices.push(await w.device(fleet, { note: i < 3 ? "go" : "stay" }));
      await w.deviceTag(devices[0] as Device, "k", "v");
      const all = devices.map((d) => d.id);
      const before = await snapshot("device", all);
      const targets = before.filter((d) => d.note === "go");
      const reply = await call(
        "DELETE",
        `/device?$filter=belongs_to__application eq ${fleet.id} and note eq 'go'`,
        undefined,
        dry,
      );
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe("3");
      const report = reply.body as { changes: Row[] };
      expect({
        ...report,
        changes: [...report.changes].sort((a, b) => (a.id as number) - (b.id as number)),
      }).toEqual({
        dryRun: true,
        affected: 3,
        changes: targets.map((d) => ({ id: d.id, before: d, after: null })),
      });
      expect(await snapshot("device", all)).toEqual(before);
      expect((await rows(`/device_tag?$filter=device eq ${devices[0]?.id}`)).length).toBe(1);
    });

    it("a dry-run deactivation records no billing event", async () => {
      const { w, fleet } = await basicWorld("drydeactivate");
      const device = await w.device(fleet);
      const reply = await call("PATCH", `/device(${device.id})`, { is_active: false }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [{ id: device.id, before: { is_active: true }, after: { is_active: false } }],
      });
      expect((await one("device", device.id))?.is_active).toBe(true);
      expect(await billingEventsOf([device.id])).toEqual([]);
    });

    it("a dry run that matches nothing reports nothing; one a rule refuses is the rule's error", async () => {
      const { w, fleet, otherRelease } = await basicWorld("drymisc");
      const device = await w.device(fleet);
      const none = await call("PATCH", "/device(999999)", { note: "x" }, dry);
      expect(none.status).toBe(200);
      expect(none.headers["x-affected-rows"]).toBe("0");
      expect(none.body).toEqual({ dryRun: true, affected: 0, changes: [] });
      const refused = await call(
        "PATCH",
        `/device(${device.id})`,
        { should_be_running__release: otherRelease.id },
        dry,
      );
      expectError(refused, 400, /should_be_running__release/);
      const deleteNone = await call("DELETE", "/device(999999)", undefined, dry);
      expect(deleteNone.body).toEqual({ dryRun: true, affected: 0, changes: [] });
    });

    it("a dry-run fleet commit change reports the new target and changes nothing", async () => {
      const { w, fleet, release } = await basicWorld("drycommit");
      const older = await w.release(fleet, { created_at: new Date("2024-01-01T00:00:00Z") });
      await w.target(fleet, release);
      const before = await one("application", fleet.id);
      const reply = await call("PATCH", `/application(${fleet.id})`, { commit: older.commit }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [
          {
            id: fleet.id,
            // Issue 19: a new target leaves should_track_latest_release as it is (balena's rule).
            before: { should_be_running__release: link(release.id), commit: release.commit },
            after: { should_be_running__release: link(older.id), commit: older.commit },
          },
        ],
      });
      expect(await one("application", fleet.id)).toEqual(before);
    });
  });

  // ---- bulk writes, checked row by row ---------------------------------------------------------------

  describe("bulk PATCH and DELETE change exactly the rows their $filter matches", () => {
    /** Two organizations, three fleets (two of them with the same app_name), tagged devices. */
    async function taggedWorld(label: string) {
      const w = world(label);
      const dt = await w.deviceType("aarch64");
      const [orgA, orgB] = [await w.organization(), await w.organization()];
      const app_name = w.name("alpha");
      const fleets = [
        await w.fleet(orgA, dt, { app_name }),
        await w.fleet(orgB, dt, { app_name }),
        await w.fleet(orgA, dt),
      ];
      const devices: Device[] = [];
      const notes = [null, "x", "y", null, "", "x"];
      for (const [f, fleet] of fleets.entries()) {
        for (let i = 0; i < 7 - f; i++) {
          devices.push(
            await w.device(fleet, { note: notes[(i + f) % notes.length] ?? null, name: `dev-${f}-${i}` }),
          );
        }
      }
      for (const [i, device] of devices.entries()) {
        if (i % 2 === 0) await w.deviceTag(device, "zone", `z${i % 3}`);
        if (i % 3 === 0) await w.deviceTag(device, "other", i % 2 ? "hot" : "cold");
        if (i % 5 === 1) await w.deviceTag(device, "hot", "hot");
      }
      const fleetRows = await snapshot(
        "application",
        fleets.map((f) => f.id),
      );
      const deviceRows = await snapshot(
        "device",
        devices.map((d) => d.id),
      );
      const tagRows = await rows(
        `/device_tag?$filter=device in (${devices.map((d) => d.id).join(", ")})&$orderby=id`,
      );
      const appNameOf = (d: Row) =>
        fleetRows.find((f) => f.id === (d.belongs_to__application as { __id: number }).__id)?.app_name;
      const tagsOf = (d: Row) => tagRows.filter((t) => (t.device as { __id: number }).__id === d.id);
      return { w, app_name, fleets, devices, deviceRows, tagRows, appNameOf, tagsOf };
    }

    it("DELETE with not, in, any and a path at once", async () => {
      const { app_name, devices, deviceRows, tagRows, appNameOf, tagsOf } = await taggedWorld("bulkdelete");
      const matches = (d: Row) => appNameOf(d) === app_name && tagsOf(d).some((t) => t.tag_key === "zone");
      // exclude one device that would match and one that would not
      const excluded = [
        deviceRows.find(matches)?.id as number,
        deviceRows.find((d) => !matches(d))?.id as number,
      ];
      const expected = deviceRows.filter((d) => !excluded.includes(d.id as number) && matches(d));
      // the data makes every part of the filter matter
      expect(expected.length).toBeGreaterThan(2);
      expect(
        deviceRows.filter((d) => appNameOf(d) === app_name && !tagsOf(d).some((t) => t.tag_key === "zone"))
          .length,
      ).toBeGreaterThan(0);
      expect(new Set(expected.map((d) => (d.belongs_to__application as { __id: number }).__id)).size).toBe(2);

      const filter = `not (id in (${excluded.join(", ")})) and belongs_to__application/app_name eq '${app_name}' and device_tag/any(t:t/tag_key eq 'zone')`;
      expectOk(await call("DELETE", `/device?$filter=${filter}`), expected.length);

      const gone = new Set(expected.map((d) => d.id));
      for (const device of deviceRows) {
        const now = await one("device", device.id as number);
        if (gone.has(device.id)) expect(now, `device ${device.id} should be deleted`).toBeUndefined();
        else expect(now, `device ${device.id} should remain unchanged`).toEqual(device);
      }
      // their tags went with them; the others' tags stay
      const tagsNow = await rows(
        `/device_tag?$filter=device in (${devices.map((d) => d.id).join(", ")})&$orderby=id`,
      );
      expect(tagsNow).toEqual(tagRows.filter((t) => !gone.has((t.device as { __id: number }).__id)));
    });

    it("PATCH with a path, in, not, any and or at once", async () => {
      const { app_name, deviceRows, appNameOf, tagsOf } = await taggedWorld("bulkpatch");
      const names = ["dev-0-1", "dev-1-2"];
      const matches = (d: Row) =>
        appNameOf(d) === app_name &&
        (d.note === null || !names.includes(d.device_name as string)) &&
        tagsOf(d).some((t) => t.value === "hot" || t.value === "z1");
      const expected = deviceRows.filter(matches);
      expect(expected.length).toBeGreaterThan(1);
      expect(expected.length).toBeLessThan(deviceRows.filter((d) => appNameOf(d) === app_name).length);

      const filter = `belongs_to__application/app_name eq '${app_name}' and (note eq null or not (device_name in ('${names.join("', '")}'))) and device_tag/any(t:t/value eq 'hot' or t/value eq 'z1')`;
      expectOk(
        await call("PATCH", `/device?$filter=${filter}`, { note: "patched", is_active: false }),
        expected.length,
      );

      const changed = new Set(expected.map((d) => d.id));
      const now = await snapshot(
        "device",
        deviceRows.map((d) => d.id as number),
      );
      expect(now.map((d) => d.id)).toEqual(deviceRows.map((d) => d.id));
      for (const [i, device] of deviceRows.entries()) {
        const want = changed.has(device.id) ? { ...device, note: "patched", is_active: false } : device;
        expect(now[i], `device ${device.id}`).toEqual(want);
      }
      // one billing event per device the PATCH deactivated
      const events = await billingEventsOf(deviceRows.map((d) => d.id as number));
      expect(events.map((e) => e.device).sort()).toEqual(expected.map((d) => d.id).sort());
    });

    it("bulk PATCH over fixture devices: a path two links deep and a count", async () => {
      // Devices of acme's fleets that have at least one tag: computed from the fixture's rows.
      const acme = fixture().organizations.find((o) => o.handle === "acme") as Organization;
      const acmeFleets = fixture()
        .applications.filter((a) => a.organization === acme.id)
        .map((a) => a.id);
      const tagged = new Set(fixture().deviceTags.map((t) => t.device));
      const expected = fixture().devices.filter(
        (d) => acmeFleets.includes(d.belongs_to__application) && tagged.has(d.id),
      );
      expect(expected.length).toBeGreaterThan(1);
      const ids = fixture().devices.map((d) => d.id);
      const before = await snapshot("device", ids);
      expectOk(
        await call(
          "PATCH",
          "/device?$filter=belongs_to__application/organization/handle eq 'acme' and device_tag/$count gt 0",
          {
            note: "acme-tagged",
          },
        ),
        expected.length,
      );
      const now = await snapshot("device", ids);
      const changed = new Set(expected.map((d) => d.id));
      for (const [i, device] of before.entries()) {
        expect(now[i], `device ${device.id}`).toEqual(
          changed.has(device.id as number) ? { ...device, note: "acme-tagged" } : device,
        );
      }
      // put the fixture back as it was
      for (const device of expected) {
        await server().test.db.prisma.device.update({
          where: { id: device.id },
          data: { note: device.note },
        });
      }
    });
  });
});
