import { beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import type { World } from "../support/matrix/matrix-build.ts";
import {
  actualShape,
  type Expansion,
  expandQuery,
  expansions,
  expectedShape,
} from "../support/matrix/matrix-expansions.ts";
import {
  type ActorName,
  countRows,
  type Oracle,
  type ResourceName,
  type Row,
  type State,
  type Table,
  tableOf,
} from "../support/matrix/matrix-world.ts";
import { cellsOf, permissionMatrix, readActions } from "../support/matrix/permission-matrix.ts";

// The read half of the matrix: collection reads, reads by key, filters and expansions that reach into
// the other organization, each as every kind of caller, on the world as it was built.

// Filters that reach from a row into the other organization, by a to-one path or any().
interface FilterSpec {
  readonly query: string;
  readonly match: (row: Row, o: Oracle) => boolean;
}

describe.each(databaseKinds)("the permission matrix on %s", (kind) => {
  const matrix = permissionMatrix(kind);
  const { prisma, call, oracle, readIds } = matrix;
  let world: World;
  let built: State;
  beforeAll(() => {
    ({ world, built } = matrix.fixture());
  });

  it("builds the world it means to", async () => {
    expect(typeof world.creds.device).toBe("string");
    expect(typeof world.creds.fleet).toBe("string");
    const whoami = async (actor: ActorName) => (await call(actor, "GET", "/actor/v1/whoami")).body;
    expect(await whoami("alice")).toMatchObject({ actorType: "user", actorTypeId: world.users.alice });
    expect(await whoami("bob")).toMatchObject({ actorType: "user", actorTypeId: world.users.bob });
    expect(await whoami("device")).toMatchObject({ actorType: "device", actorTypeId: world.devices.a1 });
    expect(await whoami("fleet")).toMatchObject({ actorType: "application", actorTypeId: world.fleets.a1 });
    expect((await call("none", "GET", "/actor/v1/whoami")).status).toBe(401);
    const b2 = built.application.find((a) => a.id === world.fleets.b2);
    expect(b2?.is_public).toBe(true);
    expect(built.application.find((a) => a.id === world.fleets.demoPublic)?.is_public).toBe(true);
    // organization_membership_role: 1 administrator (an owner), 2 member.
    const role = (user: number, org: number) =>
      built.organization_membership.find((m) => m.user === user && m.is_member_of__organization === org)
        ?.organization_membership_role;
    expect(role(world.users.alice, world.orgs.a)).toBe(2);
    expect(role(world.users.alice, world.orgs.alice)).toBe(1);
    expect(role(world.users.bob, world.orgs.b)).toBe(1);
    expect(role(world.users.alice, world.orgs.b)).toBeUndefined();
  });

  /** The world's rows of a table, plus the first and last of the demo data, and an id that does not exist. */
  const expansionTables = (list: readonly Expansion[]): Table[] =>
    list.flatMap((e) => [e.table, ...expansionTables(e.nested ?? [])]);

  function probes(table: Table): number[] {
    const rows = built[table];
    const ours = rows.filter((r) => r.id > world.baseline[table]).map((r) => r.id);
    const demo = rows.filter((r) => r.id <= world.baseline[table]).map((r) => r.id);
    return [
      ...new Set([...(demo.length ? [demo[0] as number, demo.at(-1) as number] : []), ...ours, 987_654]),
    ];
  }

  const filters: Record<ResourceName, readonly FilterSpec[]> = {
    application: [
      {
        query: "organization/handle eq 'org-b'",
        match: (row, o) => o.seen("organization", row.organization)?.handle === "org-b",
      },
      {
        // From the readable public fleet c1 into what it does not make public.
        query: "owns__device/any(d:d/device_environment_variable/any(v:v/value eq 'c1'))",
        match: (row, o) =>
          o.state.device.some(
            (d) =>
              d.belongs_to__application === row.id &&
              o.readable("device", d) &&
              o.state.device_environment_variable.some(
                (v) => v.device === d.id && v.value === "c1" && o.readable("device_environment_variable", v),
              ),
          ),
      },
      {
        query: "owns__release/any(r:r/status eq 'failed') or application_tag/any(t:t/value eq 'c1')",
        match: (row, o) =>
          o.state.release.some(
            (r) => r.belongs_to__application === row.id && r.status === "failed" && o.readable("release", r),
          ) ||
          o.state.application_tag.some(
            (t) => t.application === row.id && t.value === "c1" && o.readable("application_tag", t),
          ),
      },
      {
        query: "owns__device/any(d:d/device_tag/any(t:t/value eq 'b2'))",
        match: (row, o) =>
          o.state.device.some(
            (d) =>
              d.belongs_to__application === row.id &&
              o.readable("device", d) &&
              o.state.device_tag.some(
                (t) => t.device === d.id && t.value === "b2" && o.readable("device_tag", t),
              ),
          ),
      },
    ],
    my_application: [
      {
        query: "organization/handle eq 'org-b'",
        match: (row, o) => o.seen("organization", row.organization)?.handle === "org-b",
      },
    ],
    device: [
      {
        query: "belongs_to__application/organization/handle eq 'org-b'",
        match: (row, o) =>
          o.seen("organization", o.seen("application", row.belongs_to__application)?.organization)?.handle ===
          "org-b",
      },
    ],
    release: [
      {
        query: "belongs_to__application/organization/handle eq 'org-b'",
        match: (row, o) =>
          o.seen("organization", o.seen("application", row.belongs_to__application)?.organization)?.handle ===
          "org-b",
      },
      {
        query: "belongs_to__application/owns__device/any(d:d/device_name eq 'c1-dev')",
        match: (row, o) =>
          o.seen("application", row.belongs_to__application) !== undefined &&
          o.state.device.some(
            (d) =>
              d.belongs_to__application === row.belongs_to__application &&
              d.device_name === "c1-dev" &&
              o.readable("device", d),
          ),
      },
    ],
    device_tag: [
      {
        query: "device/belongs_to__application/organization/handle eq 'org-b'",
        match: (row, o) =>
          o.seen(
            "organization",
            o.seen("application", o.seen("device", row.device)?.belongs_to__application)?.organization,
          )?.handle === "org-b",
      },
    ],
    device_environment_variable: [
      {
        query: "device/belongs_to__application/organization/handle eq 'org-b'",
        match: (row, o) =>
          o.seen(
            "organization",
            o.seen("application", o.seen("device", row.device)?.belongs_to__application)?.organization,
          )?.handle === "org-b",
      },
    ],
    application_environment_variable: [
      {
        query: "application/organization/handle eq 'org-b'",
        match: (row, o) =>
          o.seen("organization", o.seen("application", row.application)?.organization)?.handle === "org-b",
      },
    ],
    application_tag: [
      {
        query: "application/organization/handle eq 'org-c'",
        match: (row, o) =>
          o.seen("organization", o.seen("application", row.application)?.organization)?.handle === "org-c",
      },
    ],
    billing_event: [
      {
        query: "device_uuid ne 'x'",
        match: (row) => row.device_uuid !== "x",
      },
    ],
    organization: [
      {
        query: "application/any(a:a/is_public eq true)",
        match: (row, o) =>
          o.state.application.some(
            (a) => a.organization === row.id && a.is_public === true && o.readable("application", a),
          ),
      },
    ],
    organization_membership: [
      {
        query: "is_member_of__organization/handle eq 'org-b'",
        match: (row, o) => o.seen("organization", row.is_member_of__organization)?.handle === "org-b",
      },
    ],
    user: [
      {
        query: "organization_membership/any(m:m/is_member_of__organization/handle eq 'org-b')",
        match: (row, o) =>
          o.state.organization_membership.some(
            (m) =>
              m.user === row.id &&
              o.readable("organization_membership", m) &&
              o.seen("organization", m.is_member_of__organization)?.handle === "org-b",
          ),
      },
    ],
    api_key: [
      {
        // Keys of B's fleet and device and of bob: is_of__actor is a plain integer (actors are no resource).
        query: "is_of__actor in (@b1, @b2, @bob)",
        match: (row, o) => {
          const actors = [
            o.row("application", world.fleets.b1)?.actor,
            o.row("device", world.devices.b2)?.actor,
            o.row("user", world.users.bob)?.actor,
          ];
          return actors.includes(row.is_of__actor);
        },
      },
    ],
  };

  function filterUrl(resource: ResourceName, spec: FilterSpec): string {
    let query = spec.query;
    if (resource === "api_key") {
      const actor = (table: Table, id: number) => built[table].find((r) => r.id === id)?.actor as number;
      query = query
        .replace("@b1", String(actor("application", world.fleets.b1)))
        .replace("@b2", String(actor("device", world.devices.b2)))
        .replace("@bob", String(actor("user", world.users.bob)));
    }
    return `/v6/${resource}?$select=id&$filter=${encodeURIComponent(query)}`;
  }

  describe("reads", () => {
    it.each(cellsOf(readActions))("$resource · $action · $actor", async ({ resource, action, actor }) => {
      const table = tableOf(resource);
      const o = oracle(actor, built);
      const visible = (row: Row) => o.readable(resource, row);
      const before = await countRows(prisma(), table);
      // Issue 30: a read that touches a table the caller may not read at all (users and API keys,
      // without a credential) is refused whole, 401, as balena refuses its guest.
      const list = expansions[resource];
      const touched =
        action === "expand into the other org" ? [table, ...expansionTables(list ?? [])] : [table];
      if (touched.some((t) => o.refuses(t))) {
        const byAction: Partial<Record<typeof action, string[]>> = {
          "collection read": [`/v6/${resource}?$select=id`, `/v6/${resource}/$count`],
          "key read": probes(table).map((id) => `/v6/${resource}(${id})?$select=id`),
          "filter into the other org": filters[resource].map((spec) => filterUrl(resource, spec)),
          "expand into the other org": [
            `/v6/${resource}?$select=id${list ? `&$expand=${expandQuery(list)}` : ""}`,
          ],
        };
        const urls = byAction[action];
        for (const url of urls ?? []) expect((await call(actor, "GET", url)).status, url).toBe(401);
        expect(urls?.length).toBeGreaterThan(0);
        return;
      }
      switch (action) {
        case "collection read": {
          const got = await readIds(actor, `/v6/${resource}?$select=id`);
          expect(got).toEqual(built[table].filter(visible).map((r) => r.id));
          break;
        }
        case "key read": {
          const expected: string[] = [];
          const actual: string[] = [];
          for (const id of probes(table)) {
            const row = built[table].find((r) => r.id === id);
            const got = await readIds(actor, `/v6/${resource}(${id})?$select=id`);
            actual.push(`${resource}(${id}) → ${Array.isArray(got) ? JSON.stringify(got) : got.status}`);
            expected.push(`${resource}(${id}) → ${JSON.stringify(row && visible(row) ? [id] : [])}`);
          }
          expect(actual).toEqual(expected);
          break;
        }
        case "filter into the other org": {
          for (const spec of filters[resource]) {
            const got = await readIds(actor, filterUrl(resource, spec));
            expect(got, spec.query).toEqual(
              built[table].filter((row) => visible(row) && spec.match(row, o)).map((r) => r.id),
            );
          }
          break;
        }
        case "expand into the other org": {
          const list = expansions[resource];
          if (!list) {
            const reply = await call(actor, "GET", `/v6/${resource}?$select=id&$expand=is_of__actor`);
            expect(reply.status, reply.raw).toBe(400);
            break;
          }
          const reply = await call(actor, "GET", `/v6/${resource}?$select=id&$expand=${expandQuery(list)}`);
          expect(reply.status, reply.raw).toBe(200);
          const got = (reply.body as { d: Record<string, unknown>[] }).d.map((e) => actualShape(e, list));
          const expected = built[table].filter(visible).map((row) => expectedShape(row, list, o));
          expect(got).toEqual(expected);
          break;
        }
        default:
          throw new Error(action);
      }
      // Reads change nothing.
      expect(await countRows(prisma(), table)).toBe(before);
    });
  });
});
