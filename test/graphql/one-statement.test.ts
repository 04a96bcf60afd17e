import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds } from "../support/databases.ts";
import { comparable, type GraphQLReply, graphqlTo } from "../support/graphql/graphql.ts";
import { buildMatrixWorld, type World } from "../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 28, item 2: a query's root fields run as one SQL statement. Generated operations (several
// root fields and aliases, lists with where/orderBy/first/offset, single rows by key, counts,
// nested lists and counts, fields that fail on their own) are sent to two servers on the same
// database, one combining the root reads and one with GRAPHQL_ONE_STATEMENT=false (a statement per
// root field, as before), by callers who see different rows: the answers must be the same.
// Reproduce a run with ONE_STATEMENT_SEED=<seed>; ONE_STATEMENT_RUNS sets the operations per database.

type Json = Record<string, unknown>;
type Caller = "admin" | "alice" | "bob" | "none";
const callers: readonly Caller[] = ["admin", "alice", "bob", "none"];

/** A server to send to: the test server, or the one with a statement per root field. */
type Inject = TestServer["app"];

/** What the generator may ask of one resource, in GraphQL's names. */
interface Resource {
  readonly one: string;
  readonly many: string;
  readonly type: string;
  readonly scalars: readonly string[];
  /** Relations and their counts, with their own arguments. */
  readonly nested: readonly string[];
  readonly wheres: readonly Json[];
  readonly orders: readonly string[];
  readonly ids: (world: World) => readonly number[];
}

// A time before any PostgreSQL timestamp: a filter with it fails in the database, on that field only.
const BEFORE_TIME = "-100000-01-01T00:00:00.000Z";

const resources: Record<string, Resource> = {
  application: {
    one: "application",
    many: "applications",
    type: "Application",
    scalars: ["appName", "isPublic", "organizationId", "createdAt"],
    nested: [
      "organization { id handle }",
      "ownsDevice(first: 2, orderBy: {deviceName: DESC}) { id deviceName }",
      "ownsDeviceCount",
      "ownsRelease(where: {isFinal: {eq: true}}) { id commit belongsToApplication { appName } }",
    ],
    wheres: [
      { appName: { startsWith: "a" } },
      { isPublic: { eq: true } },
      { organization: { handle: { eq: "org-b" } } },
      { ownsDevice: { some: { deviceName: { contains: "1" } } } },
      { OR: [{ id: { lt: 3 } }, { ownsDevice: { none: {} } }] },
    ],
    orders: ["{appName: DESC}", "{id: ASC}", "{organization: {handle: ASC}}"],
    ids: (w) => [w.fleets.a1, w.fleets.b1, w.fleets.b2, w.fleets.c1, w.fleets.demoPublic, 987_654],
  },
  device: {
    one: "device",
    many: "devices",
    type: "Device",
    scalars: ["uuid", "deviceName", "isOnline", "belongsToApplicationId", "overallStatus"],
    nested: [
      "belongsToApplication { id appName organization { handle } }",
      "deviceTag(first: 3, orderBy: {tagKey: DESC}) { tagKey value }",
      "deviceTagCount",
      "deviceEnvironmentVariable(offset: 1) { id }",
    ],
    wheres: [
      { deviceName: { endsWith: "dev" } },
      { belongsToApplication: { organization: { handle: { eq: "org-a" } } } },
      { deviceTag: { some: { value: { eq: "b2" } } } },
      { isOnline: { eq: false } },
      { createdAt: { gt: BEFORE_TIME } },
    ],
    orders: ["{deviceName: ASC}", "{id: DESC}", "{belongsToApplication: {appName: DESC}}"],
    ids: (w) => [w.devices.a1, w.devices.b1, w.devices.c1, w.devices.demoPublic, 987_654],
  },
  release: {
    one: "release",
    many: "releases",
    type: "Release",
    scalars: ["commit", "isFinal", "semver", "belongsToApplicationId"],
    nested: ["belongsToApplication { id isPublic }", "isRunningOnDeviceCount"],
    wheres: [{ isFinal: { eq: true } }, { belongsToApplication: { isPublic: { eq: true } } }],
    orders: ["{commit: ASC}", "{id: DESC}"],
    ids: () => [1, 2, 3, 987_654],
  },
  device_tag: {
    one: "deviceTag",
    many: "deviceTags",
    type: "DeviceTag",
    scalars: ["tagKey", "value", "deviceId"],
    nested: ["device { id deviceName belongsToApplication { appName } }"],
    wheres: [
      { value: { in: ["a1", "b2"] } },
      { device: { belongsToApplication: { isPublic: { eq: true } } } },
    ],
    orders: ["{value: DESC}", "{device: {deviceName: ASC}}"],
    ids: () => [1, 2, 987_654],
  },
  organization: {
    one: "organization",
    many: "organizations",
    type: "Organization",
    scalars: ["handle", "name"],
    nested: ["application(first: 2) { id appName ownsDeviceCount }", "applicationCount"],
    wheres: [{ handle: { startsWith: "org" } }, { application: { every: { isPublic: { eq: true } } } }],
    orders: ["{handle: DESC}"],
    ids: (w) => [w.orgs.a, w.orgs.b, w.orgs.c, 987_654],
  },
  // Refused whole to a caller without a credential (issue 30): an error of its own field.
  user: {
    one: "user",
    many: "users",
    type: "User",
    scalars: ["username"],
    nested: ["ownsDeviceCount"],
    wheres: [{ username: { ne: "alice" } }],
    orders: ["{username: ASC}"],
    ids: (w) => [w.users.alice, w.users.bob, 987_654],
  },
};

interface Field {
  readonly kind: "list" | "one" | "count";
  readonly resource: string;
  readonly selection: string;
  readonly where?: Json | undefined;
  readonly orderBy?: string | undefined;
  readonly first?: number | undefined;
  readonly offset?: number | undefined;
  readonly id?: number | undefined;
}

/** `rel { … }` → `rel { __typename … }`. */
const withTypename = (nested: string) => nested.replace(/\{ /, "{ __typename ");

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

function fieldOf(world: World): fc.Arbitrary<Field> {
  return fc.constantFrom(...Object.keys(resources)).chain((name) => {
    const r = resources[name] as Resource;
    // With `__typename`, an alias of a field also selected under its name, and a fragment, nested
    // too: the answer keeps each under its response key, in the selection's order.
    const selection = fc
      .tuple(
        fc.subarray([...r.scalars]),
        fc.subarray([...r.nested], { maxLength: Math.min(2, r.nested.length) }),
        fc.subarray(["__typename", "again: id", `... on ${r.type} { id __typename }`]),
        fc.boolean(),
      )
      .map(([scalars, nested, extra, reversed]) => {
        const items = ["id", ...scalars, ...nested.map(withTypename), ...extra];
        return (reversed ? items.reverse() : items).join(" ");
      });
    const where = optional(fc.constantFrom(...r.wheres));
    return fc.oneof(
      fc.record({
        kind: fc.constant("list" as const),
        resource: fc.constant(name),
        selection,
        where,
        orderBy: optional(fc.constantFrom(...r.orders)),
        // -1 and 5000 (over GRAPHQL_MAX_FIRST) are the field's own mistakes.
        first: optional(fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom(-1, 5000))),
        offset: optional(fc.integer({ min: 0, max: 3 })),
      }),
      fc.record({
        kind: fc.constant("one" as const),
        resource: fc.constant(name),
        selection,
        id: fc.constantFrom(...r.ids(world)),
      }),
      fc.record({ kind: fc.constant("count" as const), resource: fc.constant(name), selection, where }),
    );
  });
}

/** Several root fields, some of them asked twice under other aliases, with `where` inline or as variables. */
function operationOf(world: World) {
  return fc.record({
    fields: fc
      .array(fieldOf(world), { minLength: 1, maxLength: 8 })
      .chain((fields) =>
        fc.subarray(fields, { maxLength: Math.min(2, fields.length) }).map((again) => [...fields, ...again]),
      ),
    variables: fc.boolean(),
    typename: fc.boolean(),
  });
}

/** A JSON value as a GraphQL literal. */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([key, v]) => `${key}: ${literal(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

function render(operation: { fields: readonly Field[]; variables: boolean; typename: boolean }): {
  query: string;
  variables: Json;
} {
  const definitions: string[] = [];
  const variables: Json = {};
  const fields = operation.fields.map((field, i) => {
    const r = resources[field.resource] as Resource;
    const args: string[] = [];
    if (field.where !== undefined) {
      if (operation.variables) {
        definitions.push(`$w${i}: ${r.type}Where`);
        variables[`w${i}`] = field.where;
        args.push(`where: $w${i}`);
      } else args.push(`where: ${literal(field.where)}`);
    }
    if (field.orderBy !== undefined) args.push(`orderBy: ${field.orderBy}`);
    if (field.first !== undefined) args.push(`first: ${field.first}`);
    if (field.offset !== undefined) args.push(`offset: ${field.offset}`);
    if (field.id !== undefined) args.push(`id: ${field.id}`);
    const call = (name: string) => (args.length ? `${name}(${args.join(", ")})` : name);
    if (field.kind === "count") return `f${i}: ${call(`${r.many}Count`)}`;
    return `f${i}: ${call(field.kind === "list" ? r.many : r.one)} { ${field.selection} }`;
  });
  const head = definitions.length ? `query(${definitions.join(", ")}) ` : "";
  if (operation.typename) fields.splice(fields.length >> 1, 0, "root: __typename");
  return { query: `${head}{ ${fields.join(" ")} }`, variables };
}

/** The GraphQL operations a server ran, by what answered them (from /metrics). */
async function answeredBy(app: Inject): Promise<{ database: number; executor: number }> {
  const { body } = await app.inject({ method: "GET", url: "/metrics" });
  const count = (by: string) =>
    Number(
      new RegExp(`^fleetgate_graphql_operations_total\\{answered_by="${by}"\\} (\\d+)`, "m").exec(body)?.[1],
    );
  return { database: count("database"), executor: count("executor") };
}

describe.each(databaseKinds)("a query's root fields as one statement, on %s", (kind) => {
  let server: TestServer;
  let world: World;
  /** The same database, each root field its own statement (the path before issue 28). */
  let apart: Awaited<ReturnType<typeof buildServer>>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
    apart = await buildServer({
      db: server.test.db,
      model: buildModel(),
      config: loadConfig({ LOG_LEVEL: "silent", GRAPHQL_ONE_STATEMENT: "false", COMMAND_JOBS: "false" }),
      logger: createLogger("silent"),
    });
  }, 180_000);
  afterAll(async () => {
    await apart?.close();
    await server?.close();
  });

  function authorization(caller: Caller): string {
    switch (caller) {
      case "admin":
        return `Bearer ${server.adminKey}`;
      case "none":
        return "";
      default:
        return `Bearer ${world.creds[caller]}`;
    }
  }

  function send(to: Inject, caller: Caller, query: string, variables?: Json): Promise<GraphQLReply> {
    return graphqlTo(to, query, variables, { authorization: authorization(caller) });
  }

  it("the generator's fields and arguments are all in the schema", async () => {
    for (const r of Object.values(resources)) {
      const fields = [
        `l: ${r.many} { id ${[...r.scalars, ...r.nested].join(" ")} }`,
        ...r.wheres.map((where, i) => `c${i}: ${r.many}Count(where: ${literal(where)})`),
        ...r.orders.map((order, i) => `o${i}: ${r.many}(orderBy: ${order}) { id }`),
      ];
      const reply = await send(server.app, "admin", `{ ${fields.join(" ")} }`);
      expect(reply.status, JSON.stringify(reply.errors)).toBe(200);
      const codes = (reply.errors ?? []).map((error) => (error.extensions as Json).code);
      expect(codes.filter((code) => code !== "BAD_USER_INPUT")).toEqual([]);
    }
  });

  it("generated operations answer the same as one statement per root field, for every caller", async () => {
    const seed = process.env.ONE_STATEMENT_SEED ? Number(process.env.ONE_STATEMENT_SEED) : undefined;
    let answered = 0;
    let clean = 0;
    const before = await answeredBy(server.app);
    await fc.assert(
      fc.asyncProperty(operationOf(world), async (operation) => {
        const { query, variables } = render(operation);
        for (const caller of callers) {
          const [together, each] = [
            await send(server.app, caller, query, variables),
            await send(apart, caller, query, variables),
          ];
          const context = `${caller}: ${query} ${JSON.stringify(variables)}`;
          expect(comparable(together), context).toEqual(comparable(each));
          // The same keys in the same order: the selection's. (graphql-jit, which runs most of the
          // resolvers' operations, puts a fragment's fields after the others; graphql-js and the
          // database follow the spec's CollectFields: see the test of fragments below.)
          if (!query.includes("... on"))
            expect(JSON.stringify(together.data), context).toBe(JSON.stringify(each.data));
          if (!together.errors) clean++;
          const codes = (together.errors ?? []).map((error) => (error.extensions as Json)?.code);
          expect(codes).not.toContain("INTERNAL_SERVER_ERROR");
          // Only a field's own error from the database makes each field run alone.
          if (!JSON.stringify(variables).includes(BEFORE_TIME) && !query.includes(BEFORE_TIME))
            expect(together.statements, query).toBeLessThanOrEqual(1);
          if (together.data && Object.values(together.data).some((value) => value !== null)) answered++;
        }
      }),
      {
        numRuns: Number(process.env.ONE_STATEMENT_RUNS ?? 40),
        ...(seed !== undefined ? { seed } : {}),
      },
    );
    // Not vacuous: most operations read rows.
    expect(answered).toBeGreaterThan(40);
    // Every operation without an error was answered whole by the database (graphql/execution/answer.ts); the
    // others by the executor, which reports their errors.
    const after = await answeredBy(server.app);
    expect(after.database - before.database).toBe(clean);
    expect(clean).toBeGreaterThan(40);
  }, 300_000);

  const aliases = (n: number, field: (i: number) => string) =>
    `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join(" ")} }`;

  it("300 aliases are one statement (300 with a statement per root field)", async () => {
    const lists = aliases(300, () => "devices(first: 1000) { id deviceName deviceTagCount }");
    const together = await send(server.app, "alice", lists);
    const each = await send(apart, "alice", lists);
    expect(together.errors).toBeUndefined();
    expect(together.statements).toBe(1);
    expect(each.statements).toBe(300);
    expect(together.data).toEqual(each.data);
    // The same combination again runs as a named prepared statement (on PostgreSQL), twice.
    for (const time of [1, 2]) {
      const again = await send(server.app, "alice", lists);
      expect(again.statements, `time ${time}`).toBe(1);
      expect(again.data).toEqual(each.data);
    }
    // 300 different reads (each its own key), counts and lists mixed: still one statement.
    const ids = resources.device?.ids(world) ?? [];
    const mixed = aliases(300, (i) =>
      i % 3 === 0
        ? `device(id: ${ids[i % ids.length]}) { id deviceName belongsToApplication { appName } }`
        : i % 3 === 1
          ? `devicesCount(where: {id: {gt: ${i}}})`
          : `applications(first: 2, offset: ${i % 5}) { id ownsDeviceCount }`,
    );
    for (const caller of callers) {
      const one = await send(server.app, caller, mixed);
      const apartReply = await send(apart, caller, mixed);
      expect(one.errors).toBeUndefined();
      expect(one.statements).toBe(1);
      expect(apartReply.statements).toBe(300);
      expect(one.data).toEqual(apartReply.data);
    }
  });

  it("a field whose filter fails in the database is that field's error", async () => {
    const query = `{ a: applicationsCount ok: devices(first: 2) { id } bad: devices(where: {createdAt: {gt: "${BEFORE_TIME}"}}) { id } }`;
    const together = await send(server.app, "admin", query);
    expect(comparable(together)).toEqual(comparable(await send(apart, "admin", query)));
    // The lists are non-null, so the answer is null; the error is the failing field's, not the first
    // field's of a statement that failed for all of them.
    expect(together.errors?.map((error) => [error.path, (error.extensions as Json).code])).toEqual([
      [["bad"], "BAD_USER_INPUT"],
    ]);
  });

  it("keys come in the order of the spec's CollectFields, through fragments", async () => {
    const query = `{ deviceTags(first: 1) { ... on DeviceTag { id __typename } again: id id device { ... on Device { uuid } id } } }`;
    const reply = await send(server.app, "admin", query);
    expect(reply.errors).toBeUndefined();
    const [tag] = (reply.data as { deviceTags: Json[] }).deviceTags;
    expect(Object.keys(tag as Json)).toEqual(["id", "__typename", "again", "device"]);
    expect(Object.keys((tag as { device: Json }).device)).toEqual(["uuid", "id"]);
  });

  it("a key longer than PostgreSQL's names is answered by the resolvers, the same", async () => {
    const long = `a${"x".repeat(70)}`;
    const query = `{ devices(first: 2) { id ${long}: deviceName } ${long}: applicationsCount }`;
    const before = await answeredBy(server.app);
    const together = await send(server.app, "admin", query);
    expect(together.errors).toBeUndefined();
    expect(JSON.stringify(together.data)).toBe(JSON.stringify((await send(apart, "admin", query)).data));
    const after = await answeredBy(server.app);
    expect([after.database - before.database, after.executor - before.executor]).toEqual([0, 1]);
    // The same without the long key: answered by the database.
    await send(server.app, "admin", query.replaceAll(long, "short"));
    expect((await answeredBy(server.app)).database - after.database).toBe(1);
  });

  it("fields that read one resource by key with the same selection are read together, the same", async () => {
    const ids = [...Object.values(world.devices), 987_654];
    const { data } = await send(server.app, "admin", `{ devices(first: 4, orderBy: {id: ASC}) { uuid } }`);
    const uuids = [...(data as { devices: { uuid: string }[] }).devices.map((d) => d.uuid), "0".repeat(32)];
    const selection = "id deviceName belongsToApplication { appName } deviceTagCount __typename";
    const fields = [
      ...ids.map((id, i) => `i${i}: device(id: ${id}) { ${selection} }`),
      `again: device(id: ${ids[0]}) { ${selection} }`,
      "__typename",
      ...uuids.map((uuid, i) => `u${i}: device(uuid: "${uuid}") { uuid isOnline }`),
      `other: device(id: ${ids[1]}) { id }`,
      ...[world.fleets.a1, world.fleets.c1, 987_654].map(
        (id, i) => `f${i}: application(id: ${id}) { appName }`,
      ),
    ];
    const query = `{ ${fields.join(" ")} }`;
    for (const caller of callers) {
      const together = await send(server.app, caller, query);
      const apartReply = await send(apart, caller, query);
      expect(together.errors, JSON.stringify(together.errors)).toBeUndefined();
      expect(comparable(together)).toEqual(comparable(apartReply));
      // The same keys in the same order, the same rows, one statement.
      expect(JSON.stringify(together.data)).toBe(JSON.stringify(apartReply.data));
      expect(together.statements).toBe(1);
    }
    // Rows the caller cannot see are null, as each read alone would answer.
    const none = (await send(server.app, "none", query)).data as Json;
    expect(ids.filter((_, i) => none[`i${i}`] !== null).length).toBeLessThan(ids.length - 1);
  });

  it("a mutation's fields still run one by one, after each other", async () => {
    const reply = await send(
      server.app,
      "admin",
      `mutation { a: createApplicationTag(input: {applicationId: ${world.fleets.a1}, tagKey: "one-statement", value: "1"}) { id tagKey } }`,
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.data).toMatchObject({ a: { tagKey: "one-statement" } });
  });
});
