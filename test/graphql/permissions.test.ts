import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import type { GraphQLReply } from "../support/graphql/graphql.ts";
import { buildMatrixWorld, type World, whoIs } from "../support/matrix/matrix-build.ts";
import {
  type ActorName,
  actorNames,
  loadState,
  Oracle,
  type ResourceName,
  type Row,
  resourceNames,
  type State,
  type Table,
  tableOf,
} from "../support/matrix/matrix-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 5's permission matrix for reads, through GraphQL: the world of the OData matrix
// (test/support/matrix/matrix-build.ts) and its oracle (matrix-world.ts); every kind of caller sees exactly the
// rows the oracle says, at the root, by key, through `where` and through relations and their counts.

type Action = "list" | "count" | "by key" | "where into the other org" | "relations into the other org";
const actions: readonly Action[] = [
  "list",
  "count",
  "by key",
  "where into the other org",
  "relations into the other org",
];

/** The GraphQL names of a matrix resource: its type's fields are camelCase, the list field plural. */
const fields: Record<ResourceName, { one: string; many: string }> = {
  application: { one: "application", many: "applications" },
  my_application: { one: "myApplication", many: "myApplications" },
  device: { one: "device", many: "devices" },
  release: { one: "release", many: "releases" },
  device_tag: { one: "deviceTag", many: "deviceTags" },
  device_environment_variable: { one: "deviceEnvironmentVariable", many: "deviceEnvironmentVariables" },
  application_environment_variable: {
    one: "applicationEnvironmentVariable",
    many: "applicationEnvironmentVariables",
  },
  application_tag: { one: "applicationTag", many: "applicationTags" },
  billing_event: { one: "billingEvent", many: "billingEvents" },
  organization: { one: "organization", many: "organizations" },
  organization_membership: { one: "organizationMembership", many: "organizationMemberships" },
  user: { one: "user", many: "users" },
  api_key: { one: "apiKey", many: "apiKeys" },
};

/** Plain JSON: `where` inputs, variables, answers. */
type Json = Record<string, unknown>;

const ORG_B = { handle: { eq: "org-b" } };

/** `where` inputs reaching into organization B (or beyond what the caller sees), with the oracle's answer. */
interface WhereSpec {
  readonly where: (world: World, state: State) => Json;
  readonly match: (row: Row, o: Oracle, world: World) => boolean;
}
const throughFleet = (o: Oracle, fleet: unknown) =>
  o.seen("organization", o.seen("application", fleet)?.organization)?.handle === "org-b";
const wheres: Record<ResourceName, readonly WhereSpec[]> = {
  application: [
    {
      where: () => ({ organization: ORG_B }),
      match: (row, o) => o.seen("organization", row.organization)?.handle === "org-b",
    },
    {
      where: () => ({ ownsDevice: { some: { deviceTag: { some: { value: { eq: "b2" } } } } } }),
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
    {
      // `none` over rows the caller cannot see holds: they do not exist for the caller
      where: () => ({ ownsDevice: { none: { deviceName: { startsWith: "b" } } } }),
      match: (row, o) =>
        !o.state.device.some(
          (d) =>
            d.belongs_to__application === row.id &&
            o.readable("device", d) &&
            String(d.device_name).startsWith("b"),
        ),
    },
  ],
  my_application: [
    {
      where: () => ({ organization: ORG_B }),
      match: (row, o) => o.seen("organization", row.organization)?.handle === "org-b",
    },
  ],
  device: [
    {
      where: () => ({ belongsToApplication: { organization: ORG_B } }),
      match: (row, o) => throughFleet(o, row.belongs_to__application),
    },
    {
      // a to-many inside a to-one: the fleet's devices are filtered by what the caller sees
      where: () => ({ belongsToApplication: { ownsDevice: { some: { deviceName: { eq: "b1-dev" } } } } }),
      match: (row, o) =>
        o.seen("application", row.belongs_to__application) !== undefined &&
        o.state.device.some(
          (d) =>
            d.belongs_to__application === row.belongs_to__application &&
            d.device_name === "b1-dev" &&
            o.readable("device", d),
        ),
    },
  ],
  release: [
    {
      where: () => ({ belongsToApplication: { organization: ORG_B } }),
      match: (row, o) => throughFleet(o, row.belongs_to__application),
    },
  ],
  device_tag: [
    {
      where: () => ({ device: { belongsToApplication: { organization: ORG_B } } }),
      match: (row, o) => throughFleet(o, o.seen("device", row.device)?.belongs_to__application),
    },
  ],
  device_environment_variable: [
    {
      where: () => ({ device: { belongsToApplication: { organization: ORG_B } } }),
      match: (row, o) => throughFleet(o, o.seen("device", row.device)?.belongs_to__application),
    },
  ],
  application_environment_variable: [
    {
      where: () => ({ application: { organization: ORG_B } }),
      match: (row, o) => throughFleet(o, row.application),
    },
  ],
  application_tag: [
    {
      where: () => ({ application: { organization: { handle: { eq: "org-c" } } } }),
      match: (row, o) =>
        o.seen("organization", o.seen("application", row.application)?.organization)?.handle === "org-c",
    },
  ],
  billing_event: [
    {
      where: () => ({ kind: { eq: "deactivation" } }),
      match: (row) => row.kind === "deactivation",
    },
  ],
  organization: [
    {
      where: () => ({ application: { some: { isPublic: { eq: true } } } }),
      match: (row, o) =>
        o.state.application.some(
          (a) => a.organization === row.id && a.is_public === true && o.readable("application", a),
        ),
    },
    {
      where: () => ({ application: { every: { isPublic: { eq: true } } } }),
      match: (row, o) =>
        o.state.application.every(
          (a) => a.organization !== row.id || !o.readable("application", a) || a.is_public === true,
        ),
    },
  ],
  organization_membership: [
    {
      where: () => ({ isMemberOfOrganization: ORG_B }),
      match: (row, o) => o.seen("organization", row.is_member_of__organization)?.handle === "org-b",
    },
  ],
  user: [
    {
      where: () => ({ organizationMembership: { some: { isMemberOfOrganization: ORG_B } } }),
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
      // keys of B's fleet and device and of bob (isOfActor is a plain Int: actors are no resource)
      where: (world, state) => ({ isOfActor: { in: bActors(world, state) } }),
      match: (row, o, world) => bActors(world, o.state).includes(row.is_of__actor as number),
    },
  ],
};
const bActors = (world: World, state: State): number[] => [
  state.application.find((r) => r.id === world.fleets.b1)?.actor as number,
  state.device.find((r) => r.id === world.devices.b2)?.actor as number,
  state.user.find((r) => r.id === world.users.bob)?.actor as number,
];

/** Relations into the other organization; each level, and each to-many count, is checked against the oracle. */
interface Relation {
  readonly field: string;
  readonly table: Table;
  readonly one: boolean;
  readonly related: (row: Row, state: State) => readonly Row[];
  readonly nested?: readonly Relation[];
}
const toOne = (field: string, table: Table, fk: string, nested?: readonly Relation[]): Relation => ({
  field,
  table,
  one: true,
  related: (row, state) => state[table].filter((r) => r.id === row[fk]),
  ...(nested ? { nested } : {}),
});
const toMany = (field: string, table: Table, fk: string, nested?: readonly Relation[]): Relation => ({
  field,
  table,
  one: false,
  related: (row, state) => state[table].filter((r) => r[fk] === row.id),
  ...(nested ? { nested } : {}),
});
const org = toOne("organization", "organization", "organization");
const fleetOf = (field: string, fk: string) => toOne(field, "application", fk, [org]);
const fleetRelations = [
  org,
  toMany("ownsDevice", "device", "belongs_to__application", [
    fleetOf("belongsToApplication", "belongs_to__application"),
  ]),
  toMany("ownsRelease", "release", "belongs_to__application"),
  toMany("applicationEnvironmentVariable", "application_environment_variable", "application"),
  toMany("applicationTag", "application_tag", "application"),
];
const relations: Record<ResourceName, readonly Relation[]> = {
  application: fleetRelations,
  my_application: fleetRelations,
  device: [
    fleetOf("belongsToApplication", "belongs_to__application"),
    toMany("deviceTag", "device_tag", "device"),
    toMany("deviceEnvironmentVariable", "device_environment_variable", "device"),
  ],
  release: [fleetOf("belongsToApplication", "belongs_to__application")],
  device_tag: [
    toOne("device", "device", "device", [fleetOf("belongsToApplication", "belongs_to__application")]),
  ],
  device_environment_variable: [
    toOne("device", "device", "device", [fleetOf("belongsToApplication", "belongs_to__application")]),
  ],
  application_environment_variable: [fleetOf("application", "application")],
  application_tag: [fleetOf("application", "application")],
  billing_event: [],
  organization: [
    toMany("application", "application", "organization", [
      toMany("ownsDevice", "device", "belongs_to__application"),
    ]),
    toMany("organizationMembership", "organization_membership", "is_member_of__organization", [
      toOne("user", "user", "user"),
    ]),
  ],
  organization_membership: [
    toOne("user", "user", "user", [toMany("organizationMembership", "organization_membership", "user")]),
    toOne("isMemberOfOrganization", "organization", "is_member_of__organization"),
  ],
  user: [
    toMany("organizationMembership", "organization_membership", "user", [
      toOne("isMemberOfOrganization", "organization", "is_member_of__organization"),
    ]),
    toMany("ownsDevice", "device", "belongs_to__user"),
  ],
  api_key: [],
};

const relationTables = (list: readonly Relation[]): Table[] =>
  list.flatMap((r) => [r.table, ...relationTables(r.nested ?? [])]);

/** A query the caller may not make at all, answered as the test expects: nothing more to check. */
class Refused extends Error {}

const selectionOf = (list: readonly Relation[]): string =>
  list
    // Pages of 100 (more than any fixture holds) keep nested lists well under GRAPHQL_MAX_COST.
    .map((r) =>
      r.one
        ? `${r.field} { id ${selectionOf(r.nested ?? [])} }`
        : `${r.field}(first: 100) { id ${selectionOf(r.nested ?? [])} } ${r.field}Count`,
    )
    .join(" ");

function expectedShape(row: Row, list: readonly Relation[], o: Oracle): Json {
  const shape: Json = { id: row.id };
  for (const r of list) {
    const seen = r
      .related(row, o.state)
      .filter((related) => o.readable(r.table, related))
      .slice()
      .sort((a, b) => a.id - b.id)
      .map((related) => expectedShape(related, r.nested ?? [], o));
    if (r.one) shape[r.field] = seen[0] ?? null;
    else {
      shape[r.field] = seen;
      shape[`${r.field}Count`] = seen.length;
    }
  }
  return shape;
}

describe.each(databaseKinds)("the GraphQL permission matrix on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let built: State;

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
    built = await loadState(server.test.db.prisma);
  }, 180_000);
  afterAll(() => server.close());

  const oracle = (actor: ActorName) => new Oracle(built, whoIs(world, actor, built));

  /** A request as `actor`: a bearer credential, the provisioning key as `?apikey=` (as OData), or none. */
  async function request(
    actor: ActorName,
    method: "GET" | "POST",
    path: string,
    payload?: unknown,
  ): Promise<{ status: number; body: string; statements: number }> {
    const headers: Record<string, string> = {};
    let url = path;
    if (actor === "alice" || actor === "bob" || actor === "outsider" || actor === "device")
      headers.authorization = `Bearer ${world.creds[actor]}`;
    else if (actor !== "admin") headers.authorization = "";
    if (actor === "fleet") url += `${url.includes("?") ? "&" : "?"}apikey=${world.creds.fleet}`;
    if (payload !== undefined) headers["content-type"] = "application/json";
    const response = await server.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    return {
      status: response.statusCode,
      body: response.body,
      statements: Number(response.headers["x-sql-statements"] ?? Number.NaN),
    };
  }

  async function gql<T = Json>(actor: ActorName, query: string, variables?: Json): Promise<GraphQLReply<T>> {
    const response = await request(actor, "POST", "/graphql", { query, ...(variables ? { variables } : {}) });
    const body = JSON.parse(response.body) as { data?: T | null; errors?: GraphQLReply["errors"] };
    return { status: response.status, statements: response.statements, data: body.data, errors: body.errors };
  }

  /** The data of a query that must succeed. */
  async function answer<T = Json>(actor: ActorName, query: string, variables?: Json): Promise<T> {
    const reply = await gql<T>(actor, query, variables);
    expect(reply.errors, `${actor}: ${query} ${JSON.stringify(reply.errors)}`).toBeUndefined();
    return reply.data as T;
  }

  function expectUnauthenticated(reply: GraphQLReply): void {
    expect(reply.errors?.length, JSON.stringify(reply)).toBeGreaterThan(0);
    for (const error of reply.errors ?? []) expect(error.extensions?.code).toBe("UNAUTHENTICATED");
    expect(reply.statements).toBe(0);
  }

  /** The world's rows of a table, the first and last of the demo data, and an id that does not exist. */
  function probes(table: Table): number[] {
    const rows = built[table];
    const ours = rows.filter((r) => r.id > world.baseline[table]).map((r) => r.id);
    const demo = rows.filter((r) => r.id <= world.baseline[table]).map((r) => r.id);
    return [
      ...new Set([...(demo.length ? [demo[0] as number, demo.at(-1) as number] : []), ...ours, 987_654]),
    ];
  }

  const cells = resourceNames.flatMap((resource) =>
    actions.flatMap((action) => actorNames.map((actor) => ({ resource, action, actor }))),
  );

  it.each(cells)("$resource · $action · $actor", async ({ resource, action, actor }) => {
    const table = tableOf(resource);
    const o = oracle(actor);
    const visible = built[table].filter((row) => o.readable(resource, row));
    const { one, many } = fields[resource];
    // Issue 30: a query that reads a table the caller may not read at all (users and API keys,
    // without a credential) is refused whole, as balena refuses its guest.
    const touched =
      action === "relations into the other org" ? [table, ...relationTables(relations[resource])] : [table];
    const refused = touched.some((t) => o.refuses(t));
    const data = async <T = Json>(who: ActorName, query: string, variables?: Json): Promise<T> => {
      if (!refused) return answer<T>(who, query, variables);
      const reply = await gql(who, query, variables);
      expect(reply.errors?.length, JSON.stringify(reply)).toBeGreaterThan(0);
      for (const error of reply.errors ?? []) expect(error.extensions?.code).toBe("UNAUTHENTICATED");
      throw new Refused();
    };
    try {
      await readCell(data, { resource, action, actor, table, o, visible, one, many });
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
    }
  });

  type Answer = <T = Json>(who: ActorName, query: string, variables?: Json) => Promise<T>;
  async function readCell(
    data: Answer,
    cellOf: {
      resource: ResourceName;
      action: Action;
      actor: ActorName;
      table: Table;
      o: Oracle;
      visible: Row[];
      one: string;
      many: string;
    },
  ): Promise<void> {
    const { resource, action, actor, table, o, visible, one, many } = cellOf;
    switch (action) {
      case "list": {
        const query = `{ ${many} { id } }`;
        const got = await data<Record<string, Json[]>>(actor, query);
        expect(got[many]).toEqual(visible.map((r) => ({ id: r.id })));
        return;
      }
      case "count": {
        const query = `{ ${many}Count }`;
        expect(await data(actor, query)).toEqual({ [`${many}Count`]: visible.length });
        return;
      }
      case "by key": {
        const ids = probes(table);
        const query = `{ ${ids.map((id, i) => `p${i}: ${one}(id: ${id}) { id }`).join(" ")} }`;
        const got = await data<Record<string, Json | null>>(actor, query);
        expect(ids.map((_id, i) => got[`p${i}`] ?? null)).toEqual(
          ids.map((id) => (visible.some((r) => r.id === id) ? { id } : null)),
        );
        return;
      }
      case "where into the other org": {
        const type = `${one.charAt(0).toUpperCase()}${one.slice(1)}`.replace(
          /^MyApplication$/,
          "Application",
        );
        for (const spec of wheres[resource]) {
          const where = spec.where(world, built);
          const query = `query($w: ${type}Where) { ${many}(where: $w) { id } ${many}Count(where: $w) }`;
          const got = await data<Record<string, unknown>>(actor, query, { w: where });
          const expected = visible.filter((row) => spec.match(row, o, world)).map((r) => ({ id: r.id }));
          expect(got, JSON.stringify(where)).toEqual({ [many]: expected, [`${many}Count`]: expected.length });
        }
        return;
      }
      case "relations into the other org": {
        const list = relations[resource];
        if (list.length === 0) return;
        const query = `{ ${many}(first: 100) { id ${selectionOf(list)} } }`;
        const got = await data<Record<string, Json[]>>(actor, query);
        expect(got[many]).toEqual(visible.map((row) => expectedShape(row, list, o)));
        return;
      }
    }
  }

  it("the matrix is not vacuous: each caller but the admin misses rows, and relations cross into rows they miss", () => {
    for (const actor of ["alice", "bob", "outsider", "device", "fleet", "none"] as const) {
      const o = oracle(actor);
      expect(
        built.device.some((d) => !o.readable("device", d)),
        actor,
      ).toBe(true);
    }
    const alice = oracle("alice");
    // alice sees B's public fleet b2, but B itself and the devices of b1 and b2 are hidden from her
    expect(alice.seen("application", world.fleets.b2)).toBeDefined();
    expect(alice.seen("organization", world.orgs.b)).toBeUndefined();
    expect(alice.seen("device", world.devices.b1)).toBeUndefined();
    expect(alice.seen("device", world.devices.b2)).toBeUndefined();
    // outsider sees c1 and the device they joined to it, nothing hanging off either
    const outsider = oracle("outsider");
    expect(outsider.seen("application", world.fleets.c1)).toBeDefined();
    expect(outsider.seen("device", world.devices.c1)).toBeDefined();
    expect(outsider.seen("device", world.devices.c1b)).toBeUndefined();
    expect(built.device_tag.some((t) => t.device === world.devices.c1)).toBe(true);
    expect(built.device_tag.some((t) => outsider.readable("device_tag", t))).toBe(false);
    // the public fleets' releases: some readable by everyone, others by nobody outside
    const none = oracle("none");
    const c1Releases = built.release.filter((r) => r.belongs_to__application === world.fleets.c1);
    expect(c1Releases.filter((r) => none.readable("release", r)).length).toBe(1);
    expect(c1Releases.length).toBe(4);
  });

  it("a relation to a row the caller cannot see is null, its id still shown", async () => {
    // alice sees fleet b2 (public) but not organization B
    const got = await answer(
      "alice",
      `{ application(id: ${world.fleets.b2}) { organizationId organization { id } } organization(id: ${world.orgs.b}) { id } }`,
    );
    expect(got).toEqual({
      application: { organizationId: world.orgs.b, organization: null },
      organization: null,
    });
  });

  describe("every resource reads the same rows through GraphQL as through OData", () => {
    // Beyond the matrix: the tables no row of issue 5 names (device types, supervisor commands, …).
    const model = buildModel();
    const listField = (name: string) => {
      const camel = name.replace(/_+([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
      if (/(s|x|ch|sh)$/.test(camel)) return `${camel}es`;
      if (/[^aeiou]y$/.test(camel)) return `${camel.slice(0, -1)}ies`;
      return `${camel}s`;
    };
    const cases = [...model.resources.keys()].flatMap((resource) =>
      actorNames.map((actor) => ({ resource, actor, field: listField(resource) })),
    );
    it.each(cases)("$resource as $actor", async ({ resource, actor, field }) => {
      const odata = await request(actor, "GET", `/v6/${resource}?$select=id&$orderby=id`);
      const reply = await gql<Record<string, Json[]>>(actor, `{ ${field} { id } }`);
      if (odata.status === 401) return expectUnauthenticated(reply);
      expect(odata.status, odata.body).toBe(200);
      expect(reply.errors, JSON.stringify(reply.errors)).toBeUndefined();
      const rows = (JSON.parse(odata.body) as { d: { id: number }[] }).d;
      expect(reply.data?.[field]).toEqual(rows.map((r) => ({ id: r.id })));
    });
  });

  it("no credential reads the public rows; it cannot write or command devices; an invalid one reads nothing", async () => {
    const o = oracle("none");
    const got = await answer<{ applications: Json[]; devicesCount: number; releases: Json[] }>(
      "none",
      "{ applications { id } devicesCount releases { id } }",
    );
    expect(got).toEqual({
      applications: built.application.filter((r) => o.readable("application", r)).map((r) => ({ id: r.id })),
      devicesCount: 0,
      releases: built.release.filter((r) => o.readable("release", r)).map((r) => ({ id: r.id })),
    });
    expect(got.applications.length).toBeGreaterThan(0);
    const mutation = await gql(
      "none",
      `mutation { deleteDevices(where: {id: {eq: ${world.devices.a1}}}) { __typename } }`,
    );
    expect(mutation.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const create = await gql(
      "none",
      `mutation { createApplicationTag(input: {applicationId: ${world.fleets.c1}, tagKey: "k", value: "v"}) { id } }`,
    );
    expect(create.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const ping = await gql("none", `{ supervisorPing(target: {appId: ${world.fleets.c1}}) { targets } }`);
    expect(ping.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    // Refused before anything runs, a query that reads nothing of the caller included.
    for (const query of ["{ applications { id } }", "{ __typename }"]) {
      for (const credential of [{ authorization: "Bearer not-a-key" }, { authorization: "Basic eA==" }]) {
        const invalid = await server.app.inject({
          method: "POST",
          url: "/graphql",
          headers: { ...credential, "content-type": "application/json" },
          payload: JSON.stringify({ query }),
        });
        expect(invalid.statusCode).toBe(401);
        expect(invalid.headers["www-authenticate"]).toMatch(/^Bearer/);
        const body = JSON.parse(invalid.body) as {
          data?: unknown;
          errors?: { extensions?: { code?: string } }[];
        };
        expect(body).not.toHaveProperty("data");
        expect(body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
      }
    }
    const overGet = await server.app.inject({
      method: "GET",
      url: `/graphql?query=${encodeURIComponent("{ __typename }")}&apikey=not-a-key`,
      headers: { authorization: "" },
    });
    expect(overGet.statusCode).toBe(401);
  });
});
