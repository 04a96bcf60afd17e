import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { buildMatrixWorld, DEVICE_TYPE, type World, whoIs } from "./matrix-build.ts";
import {
  type ActorName,
  actorNames,
  countRows,
  loadState,
  Oracle,
  type ResourceName,
  type Row,
  resourceNames,
  type State,
  type Table,
  tableOf,
  tableRows,
} from "./matrix-world.ts";

// Issue 5's permission matrix: every resource × action × kind of caller, against a world built through
// the public API as the admin. Expectations come from the oracle in matrix-world.ts (the issue's rules
// in JavaScript over the rows Prisma reads back); every write is checked against the database, row by
// row, before and after.

type Action =
  | "collection read"
  | "key read"
  | "filter into the other org"
  | "expand into the other org"
  | "create"
  | "patch by key"
  | "bulk patch by $filter"
  | "delete by key"
  | "bulk delete by $filter";

const readActions: readonly Action[] = [
  "collection read",
  "key read",
  "filter into the other org",
  "expand into the other org",
];
const writeActions: readonly Action[] = [
  "create",
  "patch by key",
  "bulk patch by $filter",
  "delete by key",
  "bulk delete by $filter",
];

interface Cell {
  readonly resource: ResourceName;
  readonly action: Action;
  readonly actor: ActorName;
}

// Billing events are the server's record: no API writes them, so they are in the read matrix only.
const writtenResources = resourceNames.filter((resource) => resource !== "billing_event");

const cellsOf = (actions: readonly Action[], resources = resourceNames): Cell[] =>
  resources.flatMap((resource) =>
    actions.flatMap((action) => actorNames.map((actor) => ({ resource, action, actor }))),
  );

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: unknown;
  readonly raw: string;
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

// Filters that reach from a row into the other organization, by a to-one path or any().
interface FilterSpec {
  readonly query: string;
  readonly match: (row: Row, o: Oracle) => boolean;
}

// Expansions into the other organization; each level is checked against the rows the caller may see.
interface Expansion {
  readonly nav: string;
  readonly table: Table;
  readonly related: (row: Row, state: State) => readonly Row[];
  readonly nested?: readonly Expansion[];
}
const toOne =
  (table: Table, fk: string) =>
  (row: Row, state: State): readonly Row[] =>
    state[table].filter((r) => r.id === row[fk]);
const toMany =
  (table: Table, fk: string) =>
  (row: Row, state: State): readonly Row[] =>
    state[table].filter((r) => r[fk] === row.id);

const orgOf = (table: Table = "organization"): Expansion => ({
  nav: "organization",
  table,
  related: toOne("organization", "organization"),
});
const fleetOf = (nav: string, fk: string): Expansion => ({
  nav,
  table: "application",
  related: toOne("application", fk),
  nested: [orgOf()],
});

const expansions: Record<ResourceName, readonly Expansion[] | undefined> = {
  application: [
    orgOf(),
    { nav: "owns__device", table: "device", related: toMany("device", "belongs_to__application") },
    {
      nav: "owns__release",
      table: "release",
      related: toMany("release", "belongs_to__application"),
    },
    {
      nav: "application_environment_variable",
      table: "application_environment_variable",
      related: toMany("application_environment_variable", "application"),
    },
    {
      nav: "application_tag",
      table: "application_tag",
      related: toMany("application_tag", "application"),
    },
  ],
  my_application: [
    orgOf(),
    { nav: "owns__device", table: "device", related: toMany("device", "belongs_to__application") },
  ],
  device: [
    fleetOf("belongs_to__application", "belongs_to__application"),
    { nav: "device_tag", table: "device_tag", related: toMany("device_tag", "device") },
  ],
  release: [fleetOf("belongs_to__application", "belongs_to__application")],
  device_tag: [
    {
      nav: "device",
      table: "device",
      related: toOne("device", "device"),
      nested: [fleetOf("belongs_to__application", "belongs_to__application")],
    },
  ],
  device_environment_variable: [
    {
      nav: "device",
      table: "device",
      related: toOne("device", "device"),
      nested: [fleetOf("belongs_to__application", "belongs_to__application")],
    },
  ],
  application_environment_variable: [fleetOf("application", "application")],
  application_tag: [fleetOf("application", "application")],
  // A billing event's device is a plain integer (it outlives the device): nothing to expand.
  billing_event: undefined,
  organization: [
    { nav: "application", table: "application", related: toMany("application", "organization") },
    {
      nav: "organization_membership",
      table: "organization_membership",
      related: toMany("organization_membership", "is_member_of__organization"),
      nested: [{ nav: "user", table: "user", related: toOne("user", "user") }],
    },
  ],
  organization_membership: [
    { nav: "user", table: "user", related: toOne("user", "user") },
    {
      nav: "is_member_of__organization",
      table: "organization",
      related: toOne("organization", "is_member_of__organization"),
    },
  ],
  user: [
    {
      nav: "organization_membership",
      table: "organization_membership",
      related: toMany("organization_membership", "user"),
      nested: [
        {
          nav: "is_member_of__organization",
          table: "organization",
          related: toOne("organization", "is_member_of__organization"),
        },
      ],
    },
  ],
  // An api_key's only link is to an actor, which is no resource: nothing to expand.
  api_key: undefined,
};

const expandQuery = (list: readonly Expansion[]): string =>
  list.map((e) => `${e.nav}($select=id${e.nested ? `;$expand=${expandQuery(e.nested)}` : ""})`).join(",");

type Shape = { id: number } & { [nav: string]: number | Shape[] };

function expectedShape(row: Row, list: readonly Expansion[], o: Oracle): Shape {
  const shape: Shape = { id: row.id } as Shape;
  for (const e of list) {
    shape[e.nav] = e
      .related(row, o.state)
      .filter((r) => o.readable(e.table, r))
      .slice()
      .sort(byId)
      .map((r) => expectedShape(r, e.nested ?? [], o));
  }
  return shape;
}

function actualShape(entity: Record<string, unknown>, list: readonly Expansion[]): Shape {
  const shape: Shape = { id: entity.id as number } as Shape;
  for (const e of list) {
    const value = entity[e.nav];
    shape[e.nav] = Array.isArray(value)
      ? value.map((v) => actualShape(v as Record<string, unknown>, e.nested ?? []))
      : (value as Shape[]);
  }
  return shape;
}

describe.each(databaseKinds)("the permission matrix on %s", (kind) => {
  let server: TestServer;
  let world: World;
  /** The database right after the world was built (reads run before any write). */
  let built: State;
  let serial = 0;
  const unique = (prefix: string) => {
    serial += 1;
    return `${prefix}-${serial}`;
  };

  const prisma = () => server.test.db.prisma;

  async function call(
    actor: ActorName,
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    path: string,
    payload?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = {};
    let url = path;
    switch (actor) {
      case "admin":
        break;
      case "alice":
        headers.authorization = `Bearer ${world.creds.alice}`;
        break;
      case "bob":
        headers.authorization = `Bearer ${world.creds.bob}`;
        break;
      case "outsider":
        headers.authorization = `Bearer ${world.creds.outsider}`;
        break;
      case "device":
        headers.authorization = `Bearer ${world.creds.device}`;
        break;
      case "fleet":
        // The provisioning key goes in the query string, as `?apikey=`.
        headers.authorization = "";
        url += `${url.includes("?") ? "&" : "?"}apikey=${world.creds.fleet}`;
        break;
      case "none":
        headers.authorization = "";
        break;
    }
    Object.assign(headers, extraHeaders);
    if (payload !== undefined) headers["content-type"] = "application/json";
    const response = await server.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    let body: unknown = response.body;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  }

  async function created(path: string, payload: unknown, actor: ActorName = "admin"): Promise<number> {
    const reply = await call(actor, "POST", `/v6/${path}`, payload);
    expect(reply.status, `POST ${path} ${reply.raw}`).toBe(201);
    return (reply.body as { id: number }).id;
  }

  async function text(actor: ActorName, url: string, payload: unknown = {}): Promise<string> {
    const reply = await call(actor, "POST", url, payload);
    expect(reply.status, `POST ${url} ${reply.raw}`).toBe(200);
    return typeof reply.body === "string" ? reply.body : reply.raw;
  }

  const lastId = async (table: Table) => (await tableRows(prisma(), table)).at(-1)?.id ?? 0;

  const oracle = (actor: ActorName, state: State) => new Oracle(state, whoIs(world, actor, state));

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
    built = await loadState(prisma());
  }, 180_000);
  afterAll(() => server.close());

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
    const role = (user: number, org: number) =>
      built.organization_membership.find((m) => m.user === user && m.is_member_of__organization === org)
        ?.role;
    expect(role(world.users.alice, world.orgs.a)).toBe("member");
    expect(role(world.users.alice, world.orgs.alice)).toBe("owner");
    expect(role(world.users.bob, world.orgs.b)).toBe("owner");
    expect(role(world.users.alice, world.orgs.b)).toBeUndefined();
  });

  // ---- reads -------------------------------------------------------------------------------------------

  async function readIds(actor: ActorName, path: string): Promise<number[] | Reply> {
    const reply = await call(actor, "GET", path);
    if (reply.status !== 200) return reply;
    return ((reply.body as { d: Row[] }).d ?? []).map((row) => row.id);
  }

  /** The world's rows of a table, plus the first and last of the demo data, and an id that does not exist. */
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

  // ---- writes ------------------------------------------------------------------------------------------

  /** Bodies of a POST, each naming a row on one side or the other. */
  function createProbes(resource: ResourceName): { label: string; body: Record<string, unknown> }[] {
    const { fleets, devices, orgs, users } = world;
    const fleetProbes = (make: (fleet: number) => Record<string, unknown>) =>
      (["a1", "b1", "b2", "c1", "demoPublic", "demoPrivate"] as const).map((f) => ({
        label: f,
        body: make(fleets[f]),
      }));
    const deviceProbes = (make: (device: number) => Record<string, unknown>) =>
      (["a1", "a2", "b1", "b2", "c1", "c1b", "demoPublic"] as const).map((d) => ({
        label: d,
        body: make(devices[d]),
      }));
    switch (resource) {
      case "application":
      case "my_application":
        return (["a", "alice", "b", "bob", "demo"] as const).map((org) => ({
          label: `org ${org}`,
          body: { app_name: unique("new-fleet"), device_type: DEVICE_TYPE, organization: orgs[org] },
        }));
      case "device":
        return fleetProbes((f) => ({ belongs_to__application: f, device_name: unique("new-device") }));
      case "release":
        return fleetProbes((f) => ({
          belongs_to__application: f,
          commit: unique("new-commit"),
          status: "failed",
        }));
      case "device_tag":
        return deviceProbes((d) => ({ device: d, tag_key: unique("key"), value: "v" }));
      case "device_environment_variable":
        return deviceProbes((d) => ({ device: d, name: unique("VAR").replace("-", "_"), value: "v" }));
      case "application_environment_variable":
        return fleetProbes((f) => ({ application: f, name: unique("VAR").replace("-", "_"), value: "v" }));
      case "application_tag":
        return fleetProbes((f) => ({ application: f, tag_key: unique("key"), value: "v" }));
      case "billing_event":
        return [];
      case "organization": {
        const h = unique("new-org");
        return [{ label: "new", body: { name: h, handle: h } }];
      }
      case "organization_membership":
        return [
          // Taking over B: alice cannot see B, bob cannot see alice.
          {
            label: "alice owner of B",
            body: { user: users.alice, is_member_of__organization: orgs.b, role: "owner" },
          },
          // alice sees A, but not carol; and she is not A's owner.
          {
            label: "carol into A",
            body: { user: users.carol, is_member_of__organization: orgs.a, role: "member" },
          },
          {
            label: "bob into A",
            body: { user: users.bob, is_member_of__organization: orgs.a, role: "owner" },
          },
          { label: "carol into demo", body: { user: users.carol, is_member_of__organization: orgs.demo } },
        ];
      case "user": {
        const u = unique("newuser");
        return [{ label: "new", body: { username: u, email: `${u}@example.com`, password: "long-enough" } }];
      }
      case "api_key":
        return [{ label: "new", body: { name: "a key" } }];
    }
  }

  const linkFields: Partial<Record<Table, Record<string, Table>>> = {
    application: { organization: "organization" },
    device: { belongs_to__application: "application" },
    release: { belongs_to__application: "application" },
    device_tag: { device: "device" },
    device_environment_variable: { device: "device" },
    application_environment_variable: { application: "application" },
    application_tag: { application: "application" },
    organization_membership: { user: "user", is_member_of__organization: "organization" },
  };

  function expectedCreate(
    actor: ActorName,
    resource: ResourceName,
    body: Record<string, unknown>,
    o: Oracle,
  ) {
    if (actor === "none") return 401;
    const table = tableOf(resource);
    if (table === "api_key") return 400;
    for (const [field, target] of Object.entries(linkFields[table] ?? {})) {
      const row = o.row(target, body[field]);
      if (!row || !o.readable(target, row)) return 400;
    }
    // Whoever creates an organization owns it (a user does; a device or a fleet cannot create one).
    if (table === "organization") return o.who.kind === "user" ? 201 : 401;
    return o.writable(table, { id: -1, ...body }) ? 201 : 401;
  }

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
        return { field: "role", body: () => ({ role: "owner" }) };
      case "user":
        return { field: "email", body: (m) => ({ email: `${m}@example.com` }) };
      case "api_key":
        return { field: "name", body: (m) => ({ name: m }) };
    }
  }

  const json = (row: Row | undefined) => JSON.stringify(row);
  function changedIds(before: readonly Row[], after: readonly Row[]): number[] {
    const old = new Map(before.map((r) => [r.id, json(r)]));
    const now = new Map(after.map((r) => [r.id, json(r)]));
    const ids = new Set([...old.keys(), ...now.keys()]);
    return [...ids].filter((id) => old.get(id) !== now.get(id)).sort((a, b) => a - b);
  }

  const outcome = (reply: Reply) =>
    reply.status === 200
      ? `200 ${String(reply.body)} rows=${String(reply.headers["x-affected-rows"])}`
      : `${reply.status}`;

  describe("writes", () => {
    it.each(cellsOf(writeActions, writtenResources))(
      "$resource · $action · $actor",
      async ({ resource, action, actor }) => {
        const table = tableOf(resource);
        const expected: string[] = [];
        const actual: string[] = [];

        if (action === "create") {
          for (const { label, body } of createProbes(resource)) {
            const state = await loadState(prisma());
            const o = oracle(actor, state);
            const status = expectedCreate(actor, resource, body, o);
            const reply = await call(actor, "POST", `/v6/${resource}`, body);
            const after = await tableRows(prisma(), table);
            const added = after.filter((r) => !state[table].some((s) => s.id === r.id));
            const removed = state[table].filter((r) => !after.some((a) => a.id === r.id));
            expected.push(`${label}: ${status}, added ${status === 201 ? 1 : 0}, removed 0`);
            actual.push(`${label}: ${reply.status}, added ${added.length}, removed ${removed.length}`);
            if (reply.status === 201) {
              const row = added[0];
              expect(row?.id, reply.raw).toBe((reply.body as Row).id);
              for (const [field, value] of Object.entries(body))
                if (field !== "password" && field !== "device_type")
                  expect(row?.[field], field).toEqual(value);
            } else {
              // A refused create leaves nothing behind, not even what its rules would have made.
              expect(await countRows(prisma(), "organization")).toBe(state.organization.length);
              expect(await countRows(prisma(), "organization_membership")).toBe(
                state.organization_membership.length,
              );
            }
            // A membership made here must not hand out rights to the rest of the matrix.
            if (table === "organization_membership")
              for (const row of added)
                await prisma().organizationMembership.delete({ where: { id: row.id } });
          }
          expect(actual).toEqual(expected);
          return;
        }

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
              expect(String(row?.[patch.field])).toContain(patch.field === "role" ? "owner" : marker);
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
        const status = actor === "none" ? "401" : `200 OK rows=${changes.length}`;
        const names = (ids: number[]) => ids.map((id) => targets.find((t) => t.id === id)?.label ?? `#${id}`);
        expect(`${outcome(reply)}, changed ${JSON.stringify(names(changedIds(before, after)))}`).toBe(
          `${status}, changed ${JSON.stringify(names(actor === "none" ? [] : changes))}`,
        );
      },
    );
  });

  // ---- mass assignment ---------------------------------------------------------------------------------

  interface Forbidden {
    readonly label: string;
    readonly table: Table;
    readonly method: "POST" | "PATCH";
    readonly path: (w: World) => string;
    readonly body: (w: World) => Record<string, unknown>;
  }
  const epoch = "2020-01-01T00:00:00Z";
  const forbidden: readonly Forbidden[] = [
    ...(["actor", "created_at", "belongs_to__user"] as const).flatMap((field): Forbidden[] => {
      const value = (w: World) => (field === "created_at" ? epoch : field === "actor" ? 1 : w.users.alice);
      return [
        {
          label: `POST device.${field}`,
          table: "device",
          method: "POST",
          path: () => "/v6/device",
          body: (w) => ({ belongs_to__application: w.fleets.a1, [field]: value(w) }),
        },
        {
          label: `PATCH device.${field}`,
          table: "device",
          method: "PATCH",
          path: (w) => `/v6/device(${w.devices.a1})`,
          body: (w) => ({ [field]: value(w) }),
        },
        {
          label: `bulk PATCH device.${field}`,
          table: "device",
          method: "PATCH",
          path: (w) => `/v6/device?$filter=id eq ${w.devices.a1}`,
          body: (w) => ({ [field]: value(w) }),
        },
      ];
    }),
    ...(["actor", "created_at"] as const).map(
      (field): Forbidden => ({
        label: `PATCH application.${field}`,
        table: "application",
        method: "PATCH",
        path: (w) => `/v6/application(${w.fleets.a1})`,
        body: () => ({ [field]: field === "actor" ? 1 : epoch }),
      }),
    ),
    {
      label: "POST release.created_at",
      table: "release",
      method: "POST",
      path: () => "/v6/release",
      body: (w) => ({
        belongs_to__application: w.fleets.a1,
        commit: "created-at",
        status: "success",
        created_at: epoch,
      }),
    },
    {
      label: "POST release.is_created_by__user",
      table: "release",
      method: "POST",
      path: () => "/v6/release",
      body: (w) => ({
        belongs_to__application: w.fleets.a1,
        commit: "by-bob",
        status: "success",
        is_created_by__user: w.users.bob,
      }),
    },
    ...(["is_admin", "actor", "jwt_secret", "created_at"] as const).map(
      (field): Forbidden => ({
        label: `PATCH user.${field}`,
        table: "user",
        method: "PATCH",
        path: (w) => `/v6/user(${w.users.alice})`,
        body: () => ({
          [field]: field === "is_admin" ? true : field === "actor" ? 1 : field === "created_at" ? epoch : "x",
        }),
      }),
    ),
    {
      label: "POST user.is_admin",
      table: "user",
      method: "POST",
      path: () => "/v6/user",
      body: () => ({
        username: "mallory",
        email: "mallory@example.com",
        password: "long-enough",
        is_admin: true,
      }),
    },
    {
      label: "PATCH organization.created_at",
      table: "organization",
      method: "PATCH",
      path: (w) => `/v6/organization(${w.orgs.alice})`,
      body: () => ({ created_at: epoch }),
    },
    ...(["key_hash", "is_of__actor", "created_at"] as const).map(
      (field): Forbidden => ({
        label: `PATCH api_key.${field}`,
        table: "api_key",
        method: "PATCH",
        path: (w) => `/v6/api_key(${w.keys.fleet})`,
        body: () => ({ [field]: field === "is_of__actor" ? 1 : field === "created_at" ? epoch : "x" }),
      }),
    ),
    {
      label: "PATCH organization_membership.user",
      table: "organization_membership",
      method: "PATCH",
      path: (w) => `/v6/organization_membership?$filter=is_member_of__organization eq ${w.orgs.alice}`,
      body: (w) => ({ user: w.users.bob }),
    },
    {
      label: "PATCH organization_membership.is_member_of__organization",
      table: "organization_membership",
      method: "PATCH",
      path: (w) => `/v6/organization_membership?$filter=is_member_of__organization eq ${w.orgs.alice}`,
      body: (w) => ({ is_member_of__organization: w.orgs.b }),
    },
  ];

  describe("fields nobody writes: 400, nothing changed", () => {
    it.each(
      (["admin", "alice"] as const).flatMap((actor) => forbidden.map((c) => ({ label: c.label, actor, c }))),
    )("$label as $actor", async ({ actor, c }) => {
      const before = await tableRows(prisma(), c.table);
      const reply = await call(actor, c.method, c.path(world), c.body(world));
      expect(reply.status, reply.raw).toBe(400);
      expect(changedIds(before, await tableRows(prisma(), c.table))).toEqual([]);
    });
  });

  // ---- beyond the matrix -------------------------------------------------------------------------------

  describe("moving a row out of the caller's reach", () => {
    it("alice cannot move her device into B's public fleet (401) or B's private one (400)", async () => {
      const before = await tableRows(prisma(), "device");
      const toPublic = await call("alice", "PATCH", `/v6/device(${world.devices.a1b})`, {
        belongs_to__application: world.fleets.b2,
      });
      expect(toPublic.status, toPublic.raw).toBe(401);
      const toPrivate = await call("alice", "PATCH", `/v6/device(${world.devices.a1b})`, {
        belongs_to__application: world.fleets.b1,
      });
      expect(toPrivate.status, toPrivate.raw).toBe(400);
      const bulk = await call("alice", "PATCH", `/v6/device?$filter=id eq ${world.devices.a1b}`, {
        belongs_to__application: world.fleets.b2,
      });
      expect(bulk.status, bulk.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("alice cannot hand her fleet to B (400) nor to the demo organization (400)", async () => {
      const before = await tableRows(prisma(), "application");
      for (const org of [world.orgs.b, world.orgs.demo]) {
        const reply = await call("alice", "PATCH", `/v6/application(${world.fleets.a2})`, {
          organization: org,
        });
        expect(reply.status, reply.raw).toBe(400);
      }
      expect(changedIds(before, await tableRows(prisma(), "application"))).toEqual([]);
    });

    it("bob cannot move a fleet of his into A, nor a device of his onto alice's fleet", async () => {
      const before = await tableRows(prisma(), "application");
      const beforeDevices = await tableRows(prisma(), "device");
      const fleet = await call("bob", "PATCH", `/v6/application(${world.fleets.b1})`, {
        organization: world.orgs.a,
      });
      expect(fleet.status, fleet.raw).toBe(400);
      const device = await call("bob", "PATCH", `/v6/device(${world.devices.b1})`, {
        belongs_to__application: world.fleets.a1,
      });
      expect(device.status, device.raw).toBe(400);
      expect(changedIds(before, await tableRows(prisma(), "application"))).toEqual([]);
      expect(changedIds(beforeDevices, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("alice cannot make herself owner of A through her own membership (401, bulk: 0 rows)", async () => {
      const mine = built.organization_membership.find(
        (m) => m.user === world.users.alice && m.is_member_of__organization === world.orgs.a,
      ) as Row;
      const before = await tableRows(prisma(), "organization_membership");
      const byKey = await call("alice", "PATCH", `/v6/organization_membership(${mine.id})`, {
        role: "owner",
      });
      expect(byKey.status, byKey.raw).toBe(401);
      const bulk = await call(
        "alice",
        "PATCH",
        `/v6/organization_membership?$filter=user eq ${world.users.alice}`,
        {
          role: "owner",
        },
      );
      // Only the memberships of organizations she owns (already "owner") are hers to write.
      const o = oracle("alice", await loadState(prisma()));
      const owned = before.filter(
        (m) => m.user === world.users.alice && o.writable("organization_membership", m),
      );
      expect(outcome(bulk)).toBe(`200 OK rows=${owned.length}`);
      expect(changedIds(before, await tableRows(prisma(), "organization_membership"))).toEqual([]);
    });
  });

  describe("an organization's write leaves its memberships alone", () => {
    // "Whoever creates an organization owns it": a rename is no creation.
    it.each(["PATCH", "PUT"] as const)(
      "%s of name and handle by the admin adds no membership",
      async (method) => {
        const h = unique("renamed");
        const org = (await prisma().organization.create({ data: { name: h, handle: h } })).id;
        await prisma().organizationMembership.create({
          data: { user: world.users.bob, is_member_of__organization: org, role: "owner" },
        });
        const before = await tableRows(prisma(), "organization_membership");
        const reply = await server.app.inject({
          method,
          url: `/v6/organization(${org})`,
          headers: { "content-type": "application/json" },
          payload: JSON.stringify({ name: `${h}-2`, handle: `${h}-2` }),
        });
        expect(reply.statusCode, reply.body).toBe(200);
        expect(
          (await tableRows(prisma(), "organization_membership"))
            .filter((m) => !before.some((b) => b.id === m.id))
            .map((m) => ({ user: m.user, role: m.role })),
        ).toEqual([]);
      },
    );

    it("PATCH of name and handle by bob, the owner, adds no membership either", async () => {
      const h = unique("bobs");
      const org = (await prisma().organization.create({ data: { name: h, handle: h } })).id;
      await prisma().organizationMembership.create({
        data: { user: world.users.bob, is_member_of__organization: org, role: "owner" },
      });
      const before = await countRows(prisma(), "organization_membership");
      const reply = await call("bob", "PATCH", `/v6/organization(${org})`, {
        name: `${h}-2`,
        handle: `${h}-2`,
      });
      expect(reply.status, reply.raw).toBe(200);
      expect(await countRows(prisma(), "organization_membership")).toBe(before);
    });
  });

  describe("PUT and dry runs follow the same rules", () => {
    it("PUT: 401 on a visible row the caller may not write, 0 rows on an invisible one", async () => {
      const before = await tableRows(prisma(), "device");
      // outsider sees the device they joined to c1, but only c1's members change it.
      const visible = await call("outsider", "PUT", `/v6/device(${world.devices.c1})`, {
        device_name: "x",
      });
      expect(visible.status, visible.raw).toBe(401);
      // A device of a public fleet is no more visible than one of a private fleet.
      const ofPublicFleet = await call("alice", "PUT", `/v6/device(${world.devices.b2})`, {
        device_name: "x",
      });
      expect(outcome(ofPublicFleet)).toBe("200 OK rows=0");
      const invisible = await call("alice", "PUT", `/v6/device(${world.devices.b1})`, {
        device_name: "x",
      });
      expect(outcome(invisible)).toBe("200 OK rows=0");
      const own = await call("device", "PUT", `/v6/device(${world.devices.a1})`, {
        device_name: "x",
      });
      expect(own.status, own.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("a dry run reports only the rows the caller may write, and changes nothing", async () => {
      const before = await tableRows(prisma(), "device");
      const ids = [
        world.devices.a1,
        world.devices.a2,
        world.devices.b1,
        world.devices.b2,
        world.devices.demoPublic,
      ];
      const reply = await call(
        "alice",
        "PATCH",
        `/v6/device?$filter=id in (${ids.join(",")})`,
        { note: "dry" },
        {
          "x-dry-run": "true",
        },
      );
      expect(reply.status, reply.raw).toBe(200);
      const body = reply.body as { affected: number; changes: { id: number }[] };
      expect(body.affected).toBe(2);
      expect(body.changes.map((c) => c.id).sort((a, b) => a - b)).toEqual([
        world.devices.a1,
        world.devices.a2,
      ]);
      const asDevice = await call(
        "device",
        "DELETE",
        `/v6/device?$filter=id in (${ids.join(",")})`,
        undefined,
        {
          "x-dry-run": "true",
        },
      );
      expect(asDevice.status, asDevice.raw).toBe(200);
      expect((asDevice.body as { affected: number }).affected).toBe(0);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });
  });

  describe("credentials", () => {
    it.each([
      ["an unknown key", { authorization: "Bearer not-a-key" }, ""],
      ["a forged token", { authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJpZCI6MX0.c2lnbmF0dXJl" }, ""],
      ["an unknown ?apikey=", { authorization: "" }, "apikey=nope"],
      ["a malformed header", { authorization: "Basic YWxpY2U6cGFzc3dvcmQ=" }, ""],
    ] as const)("%s is a 401 on reads and writes, with nothing changed", async (_label, headers, query) => {
      const before = await tableRows(prisma(), "device");
      const q = (path: string) => (query ? `${path}${path.includes("?") ? "&" : "?"}${query}` : path);
      const get = await server.app.inject({ method: "GET", url: q("/v6/device?$select=id"), headers });
      expect(get.statusCode, get.body).toBe(401);
      const patch = await server.app.inject({
        method: "PATCH",
        url: q(`/v6/device?$filter=id eq ${world.devices.a1}`),
        headers: { ...headers, "content-type": "application/json" },
        payload: JSON.stringify({ note: "anonymous" }),
      });
      expect(patch.statusCode, patch.body).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("a key revoked through OData stops working at once", async () => {
      // alice may write fleet a1, so she may hold (and revoke) a key of its device.
      const key = await text("alice", `/api-key/device/${world.devices.a1b}/device-key`, {});
      const id = await lastId("api_key");
      const asDevice = () =>
        server.app.inject({
          method: "GET",
          url: "/v6/device?$select=id",
          headers: { authorization: `Bearer ${key}` },
        });
      const first = await asDevice();
      expect(first.statusCode, first.body).toBe(200);
      expect(JSON.parse(first.body).d).toEqual([{ id: world.devices.a1b }]);
      expect(outcome(await call("alice", "DELETE", `/v6/api_key(${id})`))).toBe("200 OK rows=1");
      expect((await asDevice()).statusCode).toBe(401);
    });
  });

  describe("other key forms and counts", () => {
    it("alternate and composite keys hide what the caller cannot see", async () => {
      const device = (id: number) => built.device.find((d) => d.id === id) as Row;
      const uuidRead = async (actor: ActorName, id: number) =>
        readIds(actor, `/v6/device(uuid='${device(id).uuid as string}')?$select=id`);
      expect(await uuidRead("alice", world.devices.b1)).toEqual([]);
      expect(await uuidRead("alice", world.devices.b2)).toEqual([]);
      expect(await uuidRead("outsider", world.devices.c1)).toEqual([world.devices.c1]);
      expect(await uuidRead("outsider", world.devices.c1b)).toEqual([]);
      expect(await uuidRead("device", world.devices.a1b)).toEqual([]);
      expect(await uuidRead("fleet", world.devices.a1)).toEqual([]);
      const tag = (id: number) => `/v6/device_tag(device=${id},tag_key='where')?$select=id`;
      expect(await readIds("bob", tag(world.devices.a1))).toEqual([]);
      expect(await readIds("device", tag(world.devices.a1b))).toEqual([]);
      expect((await readIds("device", tag(world.devices.a1))) as number[]).toHaveLength(1);
      const before = await tableRows(prisma(), "device_tag");
      const patched = await call(
        "bob",
        "PATCH",
        `/v6/device_tag(device=${world.devices.a1},tag_key='where')`,
        {
          value: "bob was here",
        },
      );
      expect(outcome(patched)).toBe("200 OK rows=0");
      const deleted = await call(
        "outsider",
        "DELETE",
        `/v6/device(uuid='${device(world.devices.c1).uuid as string}')`,
      );
      expect(deleted.status, deleted.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device_tag"))).toEqual([]);
    });

    it.each(actorNames)("$count agrees with what %s sees", async (actor) => {
      const state = await loadState(prisma());
      const o = oracle(actor, state);
      for (const resource of resourceNames) {
        const reply = await call(actor, "GET", `/v6/${resource}/$count`);
        expect(reply.status, reply.raw).toBe(200);
        expect((reply.body as { d: number }).d, resource).toBe(
          state[tableOf(resource)].filter((r) => o.readable(resource, r)).length,
        );
      }
      const [fleet] = (
        (
          await call(
            actor,
            "GET",
            `/v6/application?$select=id&$filter=id eq ${world.fleets.b2}&$expand=owns__device/$count`,
          )
        ).body as { d: { owns__device: number }[] }
      ).d;
      // A count inside an expansion counts only what the caller sees too.
      if (fleet)
        expect(fleet.owns__device).toBe(
          state.device.filter((d) => d.belongs_to__application === world.fleets.b2 && o.readable("device", d))
            .length,
        );
    });

    it("hidden columns are neither readable nor filterable", async () => {
      for (const [resource, field] of [
        ["user", "password"],
        ["user", "jwt_secret"],
        ["api_key", "key_hash"],
      ] as const) {
        const selected = await call("admin", "GET", `/v6/${resource}?$select=${field}`);
        expect(selected.status, selected.raw).toBe(400);
        const filtered = await call("alice", "GET", `/v6/${resource}?$filter=${field} eq 'x'`);
        expect(filtered.status, filtered.raw).toBe(400);
      }
      const alice = ((await call("alice", "GET", `/v6/user(${world.users.alice})`)).body as { d: Row[] })
        .d[0];
      expect(alice && Object.keys(alice)).not.toContain("password");
    });
  });
});
