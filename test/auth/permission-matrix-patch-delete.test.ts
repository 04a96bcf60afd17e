import { beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { DEVICE_TYPE, type World } from "../support/matrix/matrix-build.ts";
import {
  loadState,
  type ResourceName,
  type Row,
  tableOf,
  tableRows,
} from "../support/matrix/matrix-world.ts";
import {
  cellsOf,
  changedIds,
  outcome,
  permissionMatrix,
  writeActions,
  writtenResources,
} from "../support/matrix/permission-matrix.ts";

// The PATCH and DELETE cells of the matrix, by key and by $filter: on the world's rows and on rows made
// for the cell, as every kind of caller; every changed row is checked against the database.

describe.each(databaseKinds)("the permission matrix on %s", (kind) => {
  const matrix = permissionMatrix(kind);
  const { unique, prisma, call, created, text, lastId, oracle } = matrix;
  let world: World;
  beforeAll(() => {
    ({ world } = matrix.fixture());
  });

  /** Rows made (as the admin) for one write cell to change or delete, on every side of the world. */
  async function disposables(resource: ResourceName): Promise<{ label: string; id: number }[]> {
    const { fleets, devices, orgs, users } = world;
    const table = tableOf(resource);
    const make = async (label: string, path: string, body: Record<string, unknown>) => ({
      label,
      id: await created(path, body),
    });
    const fleetSides = ["a1", "a2", "b1", "b2", "c1", "demoPublic", "demoPrivate"] as const;
    const deviceSides = ["a1", "a2", "b1", "b2", "c1", "demoPublic", "demoPrivate"] as const;
    const out: { label: string; id: number }[] = [];
    switch (table) {
      case "application":
        for (const [label, org, is_public] of [
          ["org a", orgs.a, false],
          ["org alice", orgs.alice, false],
          ["org b", orgs.b, false],
          ["org b public", orgs.b, true],
          ["org demo", orgs.demo, false],
        ] as const)
          out.push(
            await make(label, "application", {
              app_name: unique("tmp-fleet"),
              device_type: DEVICE_TYPE,
              organization: org,
              is_public,
            }),
          );
        break;
      case "device":
        for (const f of fleetSides)
          out.push(
            await make(f, "device", { belongs_to__application: fleets[f], device_name: unique("tmp") }),
          );
        break;
      case "release":
        for (const f of fleetSides)
          out.push(
            await make(f, "release", {
              belongs_to__application: fleets[f],
              commit: unique("tmp"),
              status: "failed",
            }),
          );
        break;
      case "device_tag":
        for (const d of deviceSides)
          out.push(await make(d, "device_tag", { device: devices[d], tag_key: unique("tmp"), value: "v" }));
        break;
      case "device_environment_variable":
        for (const d of deviceSides)
          out.push(
            await make(d, "device_environment_variable", {
              device: devices[d],
              name: unique("TMP").replace("-", "_"),
              value: "v",
            }),
          );
        break;
      case "application_environment_variable":
        for (const f of fleetSides)
          out.push(
            await make(f, "application_environment_variable", {
              application: fleets[f],
              name: unique("TMP").replace("-", "_"),
              value: "v",
            }),
          );
        break;
      case "application_tag":
        for (const f of fleetSides)
          out.push(
            await make(f, "application_tag", { application: fleets[f], tag_key: unique("tmp"), value: "v" }),
          );
        break;
      case "organization":
        for (const [label, member, role] of [
          ["alice owns", users.alice, "owner"],
          ["alice member", users.alice, "member"],
          ["bob owns", users.bob, "owner"],
          ["admin only", undefined, undefined],
        ] as const) {
          const h = unique("tmp-org");
          const id = await created("organization", { name: h, handle: h });
          if (member !== undefined)
            await created("organization_membership", { user: member, is_member_of__organization: id, role });
          out.push({ label, id });
        }
        break;
      case "organization_membership":
        for (const org of ["a", "alice", "b", "bob", "demo"] as const) {
          // carol joins and leaves again: her memberships are nobody else's rights.
          await prisma().organizationMembership.deleteMany({
            where: { user: users.carol, is_member_of__organization: orgs[org] },
          });
          out.push(
            await make(`carol in ${org}`, "organization_membership", {
              user: users.carol,
              is_member_of__organization: orgs[org],
              role: "member",
            }),
          );
        }
        break;
      case "user": {
        const u = unique("tmpuser");
        out.push(
          await make("another user", "user", {
            username: u,
            email: `${u}@example.com`,
            password: "long-enough",
          }),
        );
        break;
      }
      case "api_key": {
        const key = async (label: string, url: string, body: Record<string, unknown> = {}) => {
          await text("admin", url, body);
          out.push({ label, id: await lastId("api_key") });
        };
        await key("alice's", "/api-key/v2", {
          actorType: "user",
          actorTypeId: users.alice,
          expiryDate: null,
        });
        await key("bob's", "/api-key/v2", { actorType: "user", actorTypeId: users.bob, expiryDate: null });
        await key("fleet a1", `/api-key/application/${fleets.a1}/provisioning`);
        await key("device a1", `/api-key/device/${devices.a1}/device-key`);
        await key("fleet a2", `/api-key/application/${fleets.a2}/provisioning`);
        await key("fleet b1", `/api-key/application/${fleets.b1}/provisioning`);
        await key("device b2", `/api-key/device/${devices.b2}/device-key`);
        await key("demo fleet", `/api-key/application/${fleets.demoPublic}/provisioning`);
        break;
      }
    }
    return out;
  }

  /** Rows of the world a PATCH may change harmlessly (a device's or a fleet's own row, and such). */
  function staticTargets(resource: ResourceName): { label: string; id: number }[] {
    switch (tableOf(resource)) {
      case "application":
        return [
          { label: "fleet a1", id: world.fleets.a1 },
          { label: "public b2", id: world.fleets.b2 },
          { label: "public c1", id: world.fleets.c1 },
        ];
      case "device":
        return [
          { label: "device a1", id: world.devices.a1 },
          { label: "outsider's device c1", id: world.devices.c1 },
        ];
      case "user":
        return (["alice", "bob", "carol", "demo"] as const).map((u) => ({ label: u, id: world.users[u] }));
      case "api_key":
        return [
          { label: "the device key", id: world.keys.device },
          { label: "the provisioning key", id: world.keys.fleet },
          { label: "bob's key", id: world.keys.bob },
        ];
      default:
        return [];
    }
  }

  /** A PATCH body that writes a marker, and the field to find it in. */
  function patchOf(resource: ResourceName): {
    field: string;
    body: (marker: string) => Record<string, unknown>;
  } {
    switch (tableOf(resource)) {
      case "application":
        return { field: "app_name", body: (m) => ({ app_name: m }) };
      case "device":
      case "release":
        return { field: "note", body: (m) => ({ note: m }) };
      case "device_tag":
      case "device_environment_variable":
      case "application_environment_variable":
      case "application_tag":
        return { field: "value", body: (m) => ({ value: m }) };
      case "billing_event":
        throw new Error("billing events are not written");
      case "organization":
        return { field: "name", body: (m) => ({ name: m }) };
      case "organization_membership":
        // Administrator (1), the link balena-sdk writes.
        return { field: "organization_membership_role", body: () => ({ organization_membership_role: 1 }) };
      case "user":
        return { field: "email", body: (m) => ({ email: `${m}@example.com` }) };
      case "api_key":
        return { field: "name", body: (m) => ({ name: m }) };
    }
  }

  describe("writes", () => {
    it.each(
      cellsOf(
        writeActions.filter((action) => action !== "create"),
        writtenResources,
      ),
    )("$resource · $action · $actor", async ({ resource, action, actor }) => {
      const table = tableOf(resource);
      const expected: string[] = [];
      const actual: string[] = [];

      const deleting = action === "delete by key" || action === "bulk delete by $filter";
      const targets = [...(deleting ? [] : staticTargets(resource)), ...(await disposables(resource))];
      const patch = patchOf(resource);
      const state = await loadState(prisma());
      const o = oracle(actor, state);
      const verdict = (id: number) => {
        const row = state[table].find((r) => r.id === id) as Row;
        return { visible: o.readable(resource, row), writable: o.writable(table, row) };
      };

      if (action === "patch by key" || action === "delete by key") {
        for (const { label, id } of targets) {
          const before = await tableRows(prisma(), table);
          const marker = unique("marked");
          const reply = deleting
            ? await call(actor, "DELETE", `/v6/${resource}(${id})`)
            : await call(actor, "PATCH", `/v6/${resource}(${id})`, patch.body(marker));
          const after = await tableRows(prisma(), table);
          const { visible, writable } = verdict(id);
          const status =
            actor === "none" ? "401" : !visible ? "200 OK rows=0" : !writable ? "401" : "200 OK rows=1";
          const changes = status === "200 OK rows=1" ? [id] : [];
          expected.push(`${label} #${id}: ${status}, changed ${JSON.stringify(changes)}`);
          actual.push(
            `${label} #${id}: ${outcome(reply)}, changed ${JSON.stringify(changedIds(before, after))}`,
          );
          if (!deleting && changes.length > 0 && reply.status === 200) {
            const row = after.find((r) => r.id === id);
            expect(String(row?.[patch.field])).toContain(
              patch.field === "organization_membership_role" ? "1" : marker,
            );
          }
        }
        expect(actual).toEqual(expected);
        return;
      }

      // Bulk: the $filter names every target, on every side; only the caller's writable rows change.
      // Fleet names are unique per organization, so a bulk PATCH of fleets switches tracking off instead.
      const bulkBody = (marker: string) =>
        table === "application" ? { should_track_latest_release: false } : patch.body(marker);
      if (table === "application")
        await prisma().application.updateMany({
          where: { id: { in: targets.map((t) => t.id) } },
          data: { should_track_latest_release: true },
        });
      const before = await tableRows(prisma(), table);
      const marker = unique("bulk");
      const filter = encodeURIComponent(`id in (${targets.map((t) => t.id).join(", ")})`);
      const reply = deleting
        ? await call(actor, "DELETE", `/v6/${resource}?$filter=${filter}`)
        : await call(actor, "PATCH", `/v6/${resource}?$filter=${filter}`, bulkBody(marker));
      const after = await tableRows(prisma(), table);
      const changes = targets
        .filter((t) => {
          const { visible, writable } = verdict(t.id);
          return visible && writable;
        })
        .map((t) => t.id)
        .sort((a, b) => a - b);
      // E-mail addresses are unique (without case): one address for several users is a 409, and the
      // transaction changes none of them.
      const taken = table === "user" && changes.length > 1;
      const status = actor === "none" ? "401" : taken ? "409" : `200 OK rows=${changes.length}`;
      const names = (ids: number[]) => ids.map((id) => targets.find((t) => t.id === id)?.label ?? `#${id}`);
      expect(`${outcome(reply)}, changed ${JSON.stringify(names(changedIds(before, after)))}`).toBe(
        `${status}, changed ${JSON.stringify(names(actor === "none" || taken ? [] : changes))}`,
      );
    });
  });
});
