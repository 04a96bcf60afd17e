import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { injectJson, type JsonReply, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// /v7/ (balena-sdk 20 and later) through the real server, with the request forms balena-sdk 23
// sends (test/clients holds the SDK itself). Every expectation is computed from the same data
// read through v6 and renamed here with the table below, written independently of
// src/odata/versions/v7.ts (pinejs-wire-format.md, "v6→v7").

type Row = Record<string, unknown>;

type Reply = JsonReply;

/** v6 → v7 field names of a device. */
const deviceNames: Record<string, string> = {
  should_be_running__release: "is_pinned_on__release",
};
/** Device fields v7 no longer has (its supervisor is a release, `should_be_managed_by__release`, in v6 too). */
const droppedDeviceFields = [
  "is_managed_by__device",
  "logs_channel",
  "should_be_managed_by__supervisor_release",
];
/**
 * overall_status values v7 names otherwise. v7 has a rule of its own (test/clients/device-v7-status.test.ts);
 * on the demo's devices it differs only in these names: each online one is heard by the API, each
 * offline one is not, and none is on the VPN alone.
 */
const statusNames: Record<string, string> = { idle: "operational", offline: "disconnected" };

/** A v6 device row (with its fleet's target release expanded as `fleet`) as v7 shows it. */
function v7Device(row: Row, fleetTarget: number | null): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (droppedDeviceFields.includes(key)) continue;
    if (key === "overall_status") out[key] = statusNames[value as string] ?? value;
    else if (key === "actor") out[key] = { __id: value };
    else out[deviceNames[key] ?? key] = value;
  }
  const pin = (row.should_be_running__release as { __id: number } | null)?.__id ?? null;
  const target = pin ?? fleetTarget;
  out.should_be_running__release = target === null ? null : { __id: target };
  // v7 only; stamped by state reports and the sweep, which the demo's devices never went through.
  out.changed_api_heartbeat_state_on__date = null;
  return out;
}

describe.each(databaseKinds)("OData /v7/ on %s", (kind) => {
  let server: TestServer;
  /** Fleet id → its target release id. */
  const fleetTargets = new Map<number, number | null>();

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    for (const fleet of await rows("v6", "/application?$select=id,should_be_running__release")) {
      const target = (fleet.should_be_running__release as { __id: number } | null)?.__id ?? null;
      fleetTargets.set(fleet.id as number, target);
    }
  });
  afterAll(() => server.close());

  const call = (version: string, method: string, path: string, payload?: unknown): Promise<Reply> =>
    injectJson(server, method as Method, `/${version}${path}`, payload);

  /** A GET that must succeed, in exactly one SQL statement. */
  async function get(version: string, path: string): Promise<unknown> {
    const reply = await call(version, "GET", path);
    expect(reply.status, `GET /${version}${path}: ${reply.raw}`).toBe(200);
    expect(reply.headers["x-sql-statements"], `GET /${version}${path}`).toBe("1");
    return (reply.body as { d: unknown }).d;
  }

  const rows = async (version: string, path: string) => (await get(version, path)) as Row[];

  async function expectError(
    version: string,
    method: string,
    path: string,
    status: number,
    payload?: unknown,
  ) {
    const reply = await call(version, method, path, payload);
    expect(reply.status, `${method} /${version}${path}: ${reply.raw}`).toBe(status);
    expect(reply.headers["content-type"]).toMatch(/^application\/json/);
    return reply;
  }

  const fleetOf = (row: Row) => (row.belongs_to__application as { __id: number }).__id;
  const targetOf = (row: Row) => fleetTargets.get(fleetOf(row)) ?? null;

  /** A demo device that is pinned (`pinned`) or follows its fleet, with the v6 row. */
  async function demoDevice(pinned: boolean): Promise<Row> {
    const filter = pinned ? "should_be_running__release ne null" : "should_be_running__release eq null";
    const [device] = await rows("v6", `/device?$filter=${filter}&$orderby=id&$top=1`);
    if (!device) throw new Error(`the demo has no ${pinned ? "pinned" : "unpinned"} device`);
    return device;
  }

  describe("device", () => {
    it("a collection shows every v7 field: the pin, the computed target, actor as a link, v7 statuses", async () => {
      const v6 = await rows("v6", "/device?$orderby=id");
      const expected = v6.map((row) => v7Device(row, targetOf(row)));
      const v7 = await rows("v7", "/device?$orderby=id");
      expect(v7).toEqual(expected);
      expect(v7.some((row) => row.is_pinned_on__release !== null)).toBe(true);
      for (const row of v7) for (const field of droppedDeviceFields) expect(row).not.toHaveProperty(field);

      const statuses = await rows("v7", "/device?$select=id,overall_status&$orderby=id");
      const v6Statuses = await rows("v6", "/device?$select=id,overall_status&$orderby=id");
      expect(statuses).toEqual(
        v6Statuses.map((row) => ({
          ...row,
          overall_status: statusNames[row.overall_status as string] ?? row.overall_status,
        })),
      );
      const values = new Set(statuses.map((row) => row.overall_status));
      expect(values).toContain("operational");
      expect(values).toContain("disconnected");
      expect(values).not.toContain("idle");
      expect(values).not.toContain("offline");
    });

    it("getTargetReleaseHash's form: should_be_running__release expands to the pin, else the fleet's target", async () => {
      for (const pinned of [true, false]) {
        const device = await demoDevice(pinned);
        const pin = (device.should_be_running__release as { __id: number } | null)?.__id;
        const wanted = pin ?? targetOf(device);
        const [release] = await rows("v6", `/release(${wanted})?$select=commit`);
        const path = `/device(uuid='${device.uuid}')?$select=id&$expand=should_be_running__release($select=commit)`;
        expect(await rows("v7", path)).toEqual([{ id: device.id, should_be_running__release: [release] }]);
        expect(await rows("v7", `/device(uuid='${device.uuid}')?$select=is_pinned_on__release`)).toEqual([
          { is_pinned_on__release: pin === undefined ? null : { __id: pin } },
        ]);
      }
    });

    it("the computed target filters, counts and orders like a link", async () => {
      const all = (
        await rows("v6", "/device?$select=id,belongs_to__application,should_be_running__release&$orderby=id")
      ).map((row) => ({
        id: row.id,
        target: (row.should_be_running__release as { __id: number } | null)?.__id ?? targetOf(row),
      }));
      const someTarget = all.find((row) => row.target !== null)?.target as number;
      const [release] = await rows("v6", `/release(${someTarget})?$select=commit`);
      const matching = all.filter((row) => row.target === someTarget).map((row) => ({ id: row.id }));
      expect(matching.length).toBeGreaterThan(0);
      expect(
        await rows(
          "v7",
          `/device?$select=id&$filter=should_be_running__release eq ${someTarget}&$orderby=id`,
        ),
      ).toEqual(matching);
      expect(
        await rows(
          "v7",
          `/device?$select=id&$filter=should_be_running__release/commit eq '${(release as Row).commit}'&$orderby=id`,
        ),
      ).toEqual(matching);
      expect(
        await rows(
          "v7",
          `/device?$select=id&$filter=should_be_running__release/any(r:r/commit eq '${(release as Row).commit}')&$orderby=id`,
        ),
      ).toEqual(matching);
      expect(await get("v7", `/device/$count?$filter=should_be_running__release/id eq ${someTarget}`)).toBe(
        matching.length,
      );
      const ordered = await rows(
        "v7",
        "/device?$select=id&$orderby=should_be_running__release/commit asc,id asc&$top=3",
      );
      expect(ordered).toHaveLength(3);
    });

    it("pinToRelease's and trackApplicationRelease's PATCH write the pin; the computed target follows", async () => {
      const device = await demoDevice(false);
      const fleet = fleetOf(device);
      const [old] = await rows(
        "v6",
        `/release?$select=id,commit&$filter=belongs_to__application eq ${fleet} and status eq 'success' and id ne ${targetOf(device)}&$top=1`,
      );
      const oldId = (old as Row).id as number;
      const pinned = await call("v7", "PATCH", `/device?$filter=id in (${device.id})`, {
        is_pinned_on__release: oldId,
      });
      // pinejs wire: v7 answers a write with an empty body (v6 with "OK").
      expect(pinned.status, pinned.raw).toBe(200);
      expect(pinned.raw).toBe("");
      expect(await rows("v6", `/device(${device.id})?$select=should_be_running__release`)).toEqual([
        { should_be_running__release: { __id: oldId } },
      ]);
      expect(
        await rows("v7", `/device(${device.id})?$select=is_pinned_on__release,should_be_running__release`),
      ).toEqual([{ is_pinned_on__release: { __id: oldId }, should_be_running__release: { __id: oldId } }]);

      const unpinned = await call("v7", "PATCH", `/device?$filter=id in (${device.id})`, {
        is_pinned_on__release: null,
      });
      expect(unpinned.status, unpinned.raw).toBe(200);
      expect(
        await rows("v7", `/device(${device.id})?$select=is_pinned_on__release,should_be_running__release`),
      ).toEqual([{ is_pinned_on__release: null, should_be_running__release: { __id: targetOf(device) } }]);
      const v6Reply = await call("v6", "PATCH", `/device(${device.id})`, { note: "v6 still answers OK" });
      expect(v6Reply.raw).toBe('"OK"');
    });

    it("the computed target and v6's names are not writable in v7", async () => {
      const device = await demoDevice(false);
      const reply = await expectError("v7", "PATCH", `/device(${device.id})`, 400, {
        should_be_running__release: null,
      });
      expect(reply.body).toMatch(/should_be_running__release/);
      await expectError("v7", "PATCH", `/device(${device.id})`, 400, { is_managed_by__device: null });
      await expectError("v7", "PATCH", `/device(${device.id})`, 400, {
        should_be_managed_by__supervisor_release: null,
      });
    });

    it("a created device is answered in v7's names", async () => {
      const device = await demoDevice(false);
      const [type] = await rows("v6", "/device_type?$select=id&$filter=slug eq 'raspberrypi4-64'");
      const created = await call("v7", "POST", "/device", {
        belongs_to__application: fleetOf(device),
        is_of__device_type: (type as Row).id,
        device_name: "made on v7",
      });
      expect(created.status, created.raw).toBe(201);
      expect(created.headers.location).toMatch(/^\/v7\/device\(\d+\)$/);
      expect(created.body).toMatchObject({
        device_name: "made on v7",
        is_pinned_on__release: null,
        should_be_running__release: targetOf(device) === null ? null : { __id: targetOf(device) },
        actor: { __id: expect.any(Number) },
      });
      expect(created.body).not.toHaveProperty("logs_channel");
      const deleted = await call("v7", "DELETE", `/device?$filter=id in (${(created.body as Row).id})`);
      expect(deleted.status, deleted.raw).toBe(200);
      expect(deleted.raw).toBe("");
    });

    it("should_be_managed_by__release is the same release link in v6 and v7", async () => {
      const url = "/device?$select=id,should_be_managed_by__release&$orderby=id&$top=5";
      expect(await rows("v7", url)).toEqual(await rows("v6", url));
    });

    it("overall_status filters in v7's values (getStatus and the dashboard's filters)", async () => {
      const v6 = async (filter: string) => rows("v6", `/device?$select=id&$filter=${filter}&$orderby=id`);
      const v7 = async (filter: string) => rows("v7", `/device?$select=id&$filter=${filter}&$orderby=id`);
      expect(await v7("overall_status eq 'operational'")).toEqual(await v6("overall_status eq 'idle'"));
      expect(await v7("overall_status eq 'disconnected'")).toEqual(await v6("overall_status eq 'offline'"));
      expect(await v7("overall_status in ('operational', 'disconnected')")).toEqual(
        await v6("overall_status in ('idle', 'offline')"),
      );
      expect(await v7("overall_status eq 'inactive'")).toEqual(await v6("overall_status eq 'inactive'"));
      expect(await v7("overall_status ne 'operational'")).toEqual(await v6("overall_status ne 'idle'"));
      // v6's names mean nothing in v7
      expect(await v7("overall_status eq 'idle' or overall_status eq 'offline'")).toEqual([]);
      expect((await v7("overall_status eq 'operational'")).length).toBeGreaterThan(0);
    });

    it("fields v7 dropped are unknown (400)", async () => {
      for (const field of [...droppedDeviceFields, "should_be_managed_by__supervisor_release"]) {
        const reply = await expectError("v7", "GET", `/device?$select=id,${field}`, 400);
        expect(reply.body).toContain(field);
        await expectError("v7", "GET", `/device?$filter=${field} eq null`, 400);
      }
      await expectError("v7", "GET", "/device?$expand=manages__device", 400);
      await expectError("v7", "GET", "/application?$select=id,depends_on__application", 400);
      await expectError("v7", "GET", "/application?$expand=is_depended_on_by__application", 400);
      // actor is a link to a resource v7 does not serve: read as {__id}, never expanded
      await expectError("v7", "GET", "/device?$expand=actor", 400);
    });
  });

  describe("actor", () => {
    it("is {__id} on devices, fleets and users, and filters by its id", async () => {
      for (const resource of ["device", "application", "user"]) {
        const v6 = await rows("v6", `/${resource}?$select=id,actor&$orderby=id`);
        expect(v6.length).toBeGreaterThan(0);
        const v7 = await rows("v7", `/${resource}?$select=id,actor&$orderby=id`);
        expect(v7).toEqual(v6.map((row) => ({ id: row.id, actor: { __id: row.actor } })));
        const first = v6[0] as Row;
        expect(await rows("v7", `/${resource}?$select=id&$filter=actor eq ${first.actor}`)).toEqual([
          { id: first.id },
        ]);
      }
    });
  });

  describe("resources and versions", () => {
    it("my_application is gone in v7 (404), as in pinejs; v6 keeps it", async () => {
      const reply = await expectError("v7", "GET", "/my_application", 404);
      expect(reply.body).toMatch(/my_application/);
      expect(await rows("v6", "/my_application?$select=id")).toBeInstanceOf(Array);
    });

    it("an unknown version (/v8/) is a JSON 404", async () => {
      const reply = await expectError("v8", "GET", "/device", 404);
      expect(typeof reply.body === "string" || typeof reply.body === "object").toBe(true);
      expect(reply.raw.length).toBeGreaterThan(0);
    });

    it("$metadata describes v7's names", async () => {
      const reply = await call("v7", "GET", "/$metadata");
      expect(reply.status, reply.raw).toBe(200);
      const device = /<EntityType Name="device">.*?<\/EntityType>/s.exec(reply.raw)?.[0] ?? "";
      expect(device).toContain('<NavigationProperty Name="is_pinned_on__release" Type="fleetgate.release"');
      expect(device).toContain(
        '<NavigationProperty Name="should_be_running__release" Type="fleetgate.release"',
      );
      expect(device).toContain('<NavigationProperty Name="should_be_managed_by__release"');
      for (const field of [...droppedDeviceFields, "should_be_managed_by__supervisor_release"])
        expect(device).not.toContain(`"${field}"`);
      expect(reply.raw).not.toContain('EntityType Name="my_application"');
      const v6 = await call("v6", "GET", "/$metadata");
      expect(v6.raw).toContain('EntityType Name="my_application"');
    });
  });
});
