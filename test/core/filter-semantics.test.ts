import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import type { Device } from "../../src/generated/prisma/client.ts";
import { buildFixture, type Fixture } from "../support/core/read-fixture.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// One regression test per family of wrong filter results found by the outside checks (issue 16), and
// the error side channel of issue 15: expectations are plain array code over the fixture's rows.

type Row = { id: number };

const ids = (devices: readonly Device[]) => devices.map((d) => d.id).sort((a, b) => a - b);

describe.each(databaseKinds)("filter semantics on %s", (kind) => {
  let server: TestServer;
  let fx: Fixture;
  let devices: Device[];
  /** A user of the first organization only (acme): the second one's fleets are hidden from them. */
  let memberKey: string;

  async function setDevice(id: number, columns: Record<string, unknown>): Promise<void> {
    const names = Object.keys(columns);
    await server.test.db.query({
      text: `UPDATE "device" SET ${names.map((name, i) => `"${name}" = $${i + 2}`).join(", ")} WHERE "id" = $1`,
      values: [id, ...Object.values(columns)],
    });
  }

  async function get(path: string, key?: string) {
    const response = await server.app.inject({
      method: "GET",
      url: `/v6${path}`,
      ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}),
    });
    return { status: response.statusCode, body: JSON.parse(response.body) as unknown };
  }

  async function selected(filter: string, key?: string): Promise<number[]> {
    const { status, body } = await get(`/device?$select=id&$filter=${encodeURIComponent(filter)}`, key);
    expect(status, JSON.stringify(body)).toBe(200);
    return (body as { d: Row[] }).d.map((row) => row.id);
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    fx = await buildFixture(server.test.db);
    const [acme] = fx.organizations;
    const [alice] = fx.users;
    if (!acme || !alice) throw new Error("fixture changed");
    await server.test.db.query({
      text: `INSERT INTO "organization_membership" ("user", "is_member_of__organization") VALUES ($1, $2)`,
      values: [alice.id, acme.id],
    });
    memberKey = await createApiKey(server.test.db, { actor: alice.actor, name: "member" });
    // The values the outside checks used: an offline device that is still provisioning, a device at
    // the int4 limit, names with whitespace other than spaces.
    const [first, second, third] = fx.devices;
    if (!first || !second || !third) throw new Error("fixture changed");
    await setDevice(first.id, {
      is_online: false,
      last_connectivity_event: new Date("2025-01-01T00:00:00Z"),
      provisioning_progress: 40,
      is_active: true,
    });
    await setDevice(second.id, { memory_usage: 2147483647 });
    await setDevice(third.id, { device_name: "\t\u00a0tabbed\u2003\n" });
    const { body } = await get("/device?$orderby=id");
    devices = fx.devices.map((device) => {
      const row = (body as { d: Record<string, unknown>[] }).d.find((r) => r.id === device.id);
      if (!row) throw new Error(`device ${device.id} is missing`);
      return {
        ...device,
        memory_usage: row.memory_usage as number | null,
        device_name: row.device_name as string,
        provisioning_progress: row.provisioning_progress as number | null,
        is_online: row.is_online as boolean,
      };
    });
  });

  afterAll(async () => {
    await server.close();
  });

  describe("a boolean predicate compared with true or false is two-valued", () => {
    it("(cpu_temp gt 50) eq false includes the devices without a cpu_temp", async () => {
      const expected = ids(devices.filter((d) => !(d.cpu_temp !== null && d.cpu_temp > 50)));
      expect(devices.some((d) => d.cpu_temp === null)).toBe(true);
      expect(await selected("(cpu_temp gt 50) eq false")).toEqual(expected);
    });

    it("(status in ('Idle')) eq false includes the devices without a status", async () => {
      const expected = ids(devices.filter((d) => d.status !== "Idle"));
      expect(await selected("(status in ('Idle')) eq false")).toEqual(expected);
    });

    it("(cpu_temp lt 50) ne false is cpu_temp lt 50, and a bulk PATCH dry run changes exactly those", async () => {
      const expected = ids(devices.filter((d) => d.cpu_temp !== null && d.cpu_temp < 50));
      expect(await selected("(cpu_temp lt 50) ne false")).toEqual(expected);
      const response = await server.app.inject({
        method: "PATCH",
        url: `/v6/device?$filter=${encodeURIComponent("(cpu_temp lt 50) ne false")}`,
        headers: { "x-dry-run": "true" },
        payload: { note: "bulk" },
      });
      expect(response.statusCode, response.body).toBe(200);
      const report = JSON.parse(response.body) as { affected: number; changes: { id: number }[] };
      expect(report.changes.map((change) => change.id).sort((a, b) => a - b)).toEqual(expected);
    });
  });

  describe("nav/id ne N keeps the rows without a link", () => {
    it("belongs_to__user/id ne alice", async () => {
      const alice = fx.users[0]?.id;
      const expected = ids(devices.filter((d) => d.belongs_to__user !== alice));
      expect(devices.some((d) => d.belongs_to__user === null)).toBe(true);
      expect(await selected(`belongs_to__user/id ne ${alice}`)).toEqual(expected);
    });

    it("not (belongs_to__user/id ne alice) is belongs_to__user/id eq alice", async () => {
      const alice = fx.users[0]?.id;
      const expected = ids(devices.filter((d) => d.belongs_to__user === alice));
      expect(await selected(`not (belongs_to__user/id ne ${alice})`)).toEqual(expected);
      expect(await selected(`belongs_to__user/id eq ${alice}`)).toEqual(expected);
    });

    it("a hidden linked row reads as no link: ne holds for it", async () => {
      // For alice, a device of the second organization's fleets is hidden, so its id reads as null.
      const hidden = fx.applications.filter((a) => a.organization !== fx.organizations[0]?.id);
      const response = await get(
        `/device_tag?$select=id&$filter=${encodeURIComponent(`device/belongs_to__application/id ne ${hidden[0]?.id}`)}`,
        memberKey,
      );
      expect(response.status).toBe(200);
    });
  });

  // Issue 30: balena's rule order (open-balena-api's device-additions.ts): offline comes before
  // configuring, so a device that went offline while provisioning reads offline.
  it("overall_status: an offline device that is still provisioning is offline (balena's rule order)", async () => {
    const device = devices[0];
    const { body } = await get(`/device(${device?.id})?$select=overall_status`);
    expect(body).toEqual({ d: [{ overall_status: "offline" }] });
    expect(await selected("overall_status eq 'offline'")).toContain(device?.id);
    expect(await selected("overall_status eq 'configuring'")).not.toContain(device?.id);
  });

  describe("numbers", () => {
    it("a decimal literal with a zero fraction divides exactly: cpu_temp div 2.0", async () => {
      const exact = ids(devices.filter((d) => d.cpu_temp !== null && d.cpu_temp / 2 === 20));
      const integral = ids(devices.filter((d) => d.cpu_temp !== null && Math.trunc(d.cpu_temp / 2) === 20));
      expect(exact).not.toEqual(integral);
      expect(await selected("cpu_temp div 2.0 eq 20")).toEqual(exact);
      expect(await selected("cpu_temp div 2 eq 20")).toEqual(integral);
    });

    it("integer arithmetic does not overflow: memory_usage add 1 gt 2147483647", async () => {
      const expected = ids(devices.filter((d) => d.memory_usage !== null && d.memory_usage + 1 > 2147483647));
      expect(expected).toHaveLength(1);
      expect(await selected("memory_usage add 1 gt 2147483647")).toEqual(expected);
      expect(await selected("memory_usage mul memory_usage gt 4611686014132420608")).toEqual(expected);
    });

    it("integer literals beyond int8 compare exactly, alone and in a list", async () => {
      expect(await selected("memory_usage lt 99999999999999999999")).toEqual(
        ids(devices.filter((d) => d.memory_usage !== null)),
      );
      expect(await selected("memory_usage in (99999999999999999999, 2147483647)")).toEqual(
        ids(devices.filter((d) => d.memory_usage === 2147483647)),
      );
    });

    it("mod takes the sign of the dividend and integer div truncates toward zero", async () => {
      const expected = ids(
        devices.filter(
          (d) => d.cpu_temp !== null && (-d.cpu_temp % 7 === -3 || Math.trunc(-d.cpu_temp / 7) === -6),
        ),
      );
      expect(await selected("(0 sub cpu_temp) mod 7 eq -3 or (0 sub cpu_temp) div 7 eq -6")).toEqual(
        expected,
      );
    });

    it("a constant zero divisor is a 400 that names the operation, whatever the rows", async () => {
      for (const filter of ["id div 0 eq 1", "id mod (2 sub 2) eq 1", "1 div (3 div 4) eq 1"]) {
        const { status, body } = await get(`/device/$count?$filter=${encodeURIComponent(filter)}`);
        expect(status, filter).toBe(400);
        expect(body).toMatch(/^Division by zero in '(div|mod)'$/);
      }
    });

    it("a division by zero on the caller's own row is a 400 that names the operation, not the value", async () => {
      const { status, body } = await get(
        `/device?$filter=${encodeURIComponent("1 div (memory_usage sub memory_usage) eq 0")}`,
      );
      expect(status).toBe(400);
      expect(body).toBe("Division by zero in 'div' or 'mod'");
    });
  });

  describe("strings", () => {
    it("trim strips tabs, no-break and other Unicode spaces", async () => {
      const expected = ids(devices.filter((d) => d.device_name.trim() === "tabbed"));
      expect(expected).toHaveLength(1);
      expect(await selected("trim(device_name) eq 'tabbed'")).toEqual(expected);
    });

    it("substring never fails on its bounds: negative, huge, and past the end", async () => {
      const cp = (s: string) => Array.from(s);
      const sub = (s: string, i: number, n?: number) => {
        const from = Math.max(i, 0);
        return cp(s)
          .slice(from, n === undefined ? undefined : from + Math.max(n, 0))
          .join("");
      };
      const cases: [string, (d: Device) => boolean][] = [
        ["substring(device_name, -3, 2) eq 'li'", (d) => sub(d.device_name, -3, 2) === "li"],
        ["substring(device_name, 2, -1) eq ''", (d) => sub(d.device_name, 2, -1) === ""],
        ["substring(device_name, 2147483647) eq ''", () => true],
        [
          "substring(device_name, 1, memory_usage mul 100000) eq substring(device_name, 1)",
          (d) => d.memory_usage !== null,
        ],
        ["substring(device_name, 0 sub memory_usage) eq device_name", (d) => d.memory_usage !== null],
      ];
      for (const [filter, predicate] of cases) {
        expect(await selected(filter), filter).toEqual(ids(devices.filter(predicate)));
      }
      const { status } = await get(
        `/device?$filter=${encodeURIComponent("substring(device_name, 1.5) eq 'x'")}`,
      );
      expect(status).toBe(400);
    });
  });

  describe("no answer depends on rows the caller cannot see (issue 15)", () => {
    /** A device of the second organization, hidden from the member of the first. */
    function hiddenDevice(): Device {
      const hidden = new Set(
        fx.applications.filter((a) => a.organization !== fx.organizations[0]?.id).map((a) => a.id),
      );
      const device = devices.find((d) => hidden.has(d.belongs_to__application));
      if (!device) throw new Error("fixture changed");
      return device;
    }

    const probes = [
      "1 div (memory_usage sub 987654) eq 0",
      "1 mod (memory_usage sub 987654) eq 0",
      "1 div length(replace(substring(device_name,0,15),'secret-name','')) eq 0",
      "owns__device/any(d:1 div (d/memory_usage sub 987654) eq 0)",
    ];

    it("a hidden device whose values would fail the caller's expression changes nothing in the answer", async () => {
      const target = hiddenDevice();
      const answers = async () =>
        Promise.all(
          probes.map(async (filter) => {
            const resource = filter.startsWith("owns__device") ? "application" : "device";
            const count = await get(`/${resource}/$count?$filter=${encodeURIComponent(filter)}`, memberKey);
            const rows = await get(
              `/${resource}?$select=id&$filter=${encodeURIComponent(filter)}`,
              memberKey,
            );
            return { filter, count, rows };
          }),
        );
      const before = await answers();
      await setDevice(target.id, { memory_usage: 987654, device_name: "secret-name" });
      try {
        expect(await answers()).toEqual(before);
        for (const answer of before) expect(answer.count.status, answer.filter).toBe(200);
      } finally {
        await setDevice(target.id, { memory_usage: target.memory_usage, device_name: target.device_name });
      }
    });

    it("the same when PostgreSQL scans the hidden rows first (many of them, analyzed)", async () => {
      // With statistics that make the caller's rows few and the hidden ones many, PostgreSQL scans
      // device_tag with the caller's filter and joins the permission afterwards: unguarded, the
      // filter then ran on every hidden tag.
      const target = hiddenDevice();
      const filter = encodeURIComponent("1 div (length(value) sub 8) eq 0");
      const answers = async () =>
        Promise.all(
          [`/device_tag/$count?$filter=${filter}`, `/device_tag?$select=id&$filter=${filter}`].map((url) =>
            get(url, memberKey),
          ),
        );
      const before = await answers();
      await server.test.db.query({
        text: `INSERT INTO "device_tag" ("device", "tag_key", "value")
               SELECT $1::int4, 'probe-' || g, 'hunter22' FROM generate_series(1, 3000) g`,
        values: [target.id],
      });
      await server.test.db.query({ text: `ANALYZE`, values: [] });
      try {
        expect(await answers()).toEqual(before);
        expect(before[0]?.status).toBe(200);
      } finally {
        await server.test.db.query({
          text: `DELETE FROM "device_tag" WHERE "tag_key" LIKE 'probe-%'`,
          values: [],
        });
      }
    });

    it("the same in $expand, in an expansion's $count and in a bulk PATCH dry run", async () => {
      const target = hiddenDevice();
      const filter = encodeURIComponent("1 div (memory_usage sub 987654) eq 0");
      const requests = [
        `/application?$select=id&$expand=owns__device($select=id;$filter=${filter})`,
        `/application?$select=id&$expand=owns__device/$count($filter=${filter})`,
        `/application?$select=id&$orderby=owns__device/$count($filter=${filter})`,
      ];
      const answers = async () => Promise.all(requests.map((url) => get(url, memberKey)));
      const dryRun = async () => {
        const response = await server.app.inject({
          method: "PATCH",
          url: `/v6/device?$filter=${filter}`,
          headers: { authorization: `Bearer ${memberKey}`, "x-dry-run": "true" },
          payload: { note: "probe" },
        });
        return { status: response.statusCode, body: response.body };
      };
      const before = { reads: await answers(), write: await dryRun() };
      await setDevice(target.id, { memory_usage: 987654 });
      try {
        expect({ reads: await answers(), write: await dryRun() }).toEqual(before);
      } finally {
        await setDevice(target.id, { memory_usage: target.memory_usage });
      }
    });
  });
});
