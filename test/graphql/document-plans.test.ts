import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds } from "../support/databases.ts";
import { comparable, type GraphQLReply, graphqlTo } from "../support/graphql/graphql.ts";
import { parseExposition, sampleValue } from "../support/http/prometheus.ts";
import { buildMatrixWorld, type World } from "../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 28, item 2: an operation answered by the database is planned once per document, caller and
// shape of its variables (src/graphql/execution/document-plans.ts); later requests bind their own values into
// the cached plan. Generated documents whose variables reach keys, comparisons in a `where`, a
// pattern (`startsWith`), `first` and `offset` are each sent several times with other values, by
// callers who see different rows, to this server and to one that runs each root field through the
// resolvers (GRAPHQL_ONE_STATEMENT=false): the answers must be the same, errors included.
// Reproduce a run with DOCUMENT_PLANS_SEED=<seed>.

type Json = Record<string, unknown>;
type Caller = "admin" | "alice" | "bob" | "none";
const callers: readonly Caller[] = ["admin", "alice", "bob", "none"];
type Inject = TestServer["app"];

/** A variable's type and the values the generator gives it. */
type Kind = "Int" | "String";

/**
 * A root field with `$`-holes: each `$` is a variable of the kind in `holes`, in order. `bound`:
 * whether every caller's plan of it binds its values (not a limit, a pattern, or a field refused to
 * a caller).
 */
interface Template {
  readonly text: string;
  readonly holes: readonly Kind[];
  readonly bound?: false;
}

const templates: readonly Template[] = [
  { text: "device(id: $) { id deviceName belongsToApplication { appName } }", holes: ["Int"] },
  { text: "device(uuid: $) { id uuid isOnline }", holes: ["String"] },
  { text: "application(id: $) { id appName ownsDeviceCount }", holes: ["Int"] },
  { text: "devices(where: {id: {gt: $}}, orderBy: {id: ASC}, first: 3) { id deviceName }", holes: ["Int"] },
  { text: "devices(where: {deviceName: {eq: $}}) { id }", holes: ["String"] },
  { text: "devices(first: $, offset: $, orderBy: {id: DESC}) { id }", holes: ["Int", "Int"], bound: false },
  {
    text: "applications(where: {appName: {startsWith: $}}, orderBy: {id: ASC}) { id appName }",
    holes: ["String"],
    bound: false,
  },
  { text: "applications(where: {organization: {handle: {eq: $}}}) { id }", holes: ["String"] },
  { text: "devicesCount(where: {belongsToApplication: {id: {eq: $}}})", holes: ["Int"] },
  {
    text: "deviceTags(where: {value: {eq: $}}, orderBy: {value: DESC}) { value device { id } }",
    holes: ["String"],
  },
  { text: "organization(id: $) { handle applicationCount }", holes: ["Int"] },
  { text: "users(where: {username: {ne: $}}) { username }", holes: ["String"], bound: false },
];

function valuesFor(kind: Kind, world: World, uuids: readonly string[]): fc.Arbitrary<unknown> {
  const ids = [...Object.values(world.devices), ...Object.values(world.fleets), ...Object.values(world.orgs)];
  const integers = fc.oneof(
    fc.constantFrom(...ids, 0, 1, 2, 987_654),
    // Out of `first`'s and `offset`'s range: the field's own error.
    fc.constantFrom(-1, 5000),
  );
  const texts = fc.constantFrom(
    ...uuids,
    "0".repeat(32),
    "org-a",
    "org-b",
    "a",
    "a1",
    "b2",
    "",
    "it's",
    "%",
    "alice",
    "fgslot1x0x1",
  );
  return kind === "Int" ? integers : texts;
}

interface Operation {
  readonly query: string;
  readonly kinds: readonly Kind[];
  readonly bound: boolean;
}

function operationOf(): fc.Arbitrary<Operation> {
  return fc.array(fc.constantFrom(...templates), { minLength: 1, maxLength: 6 }).map((fields) => {
    const kinds: Kind[] = [];
    const definitions: string[] = [];
    const text = fields.map((field, i) => {
      let hole = 0;
      return `f${i}: ${field.text.replace(/\$/g, () => {
        const kind = field.holes[hole++] as Kind;
        definitions.push(`$v${kinds.length}: ${kind}`);
        kinds.push(kind);
        return `$v${kinds.length - 1}`;
      })}`;
    });
    return {
      query: `query Generated(${definitions.join(", ")}) { ${text.join(" ")} }`,
      kinds,
      bound: fields.every((field) => field.bound !== false),
    };
  });
}

/** The lookups of the document cache so far (/metrics). */
async function documentCache(app: Inject): Promise<{ hit: number; miss: number }> {
  const { samples } = parseExposition((await app.inject({ method: "GET", url: "/metrics" })).body);
  const count = (result: string) =>
    sampleValue(samples, "fleetgate_statement_cache_lookups_total", { cache: "graphql_document", result }) ??
    0;
  return { hit: count("hit"), miss: count("miss") };
}

describe.each(databaseKinds)("an operation's plan, learnt once per document, on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let uuids: string[];
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
    const reply = await send(server.app, "admin", "{ devices(orderBy: {id: ASC}) { uuid } }");
    uuids = (reply.data as { devices: { uuid: string }[] }).devices.map((device) => device.uuid);
  }, 180_000);
  afterAll(async () => {
    await apart?.close();
    await server?.close();
  });

  function authorization(caller: Caller): string {
    if (caller === "admin") return `Bearer ${server.adminKey}`;
    return caller === "none" ? "" : `Bearer ${world.creds[caller]}`;
  }

  function send(to: Inject, caller: Caller, query: string, variables?: Json): Promise<GraphQLReply> {
    return graphqlTo(to, query, variables, { authorization: authorization(caller) });
  }

  it("later requests with other values answer as the resolvers do, for every caller", async () => {
    const seed = process.env.DOCUMENT_PLANS_SEED ? Number(process.env.DOCUMENT_PLANS_SEED) : undefined;
    const before = await documentCache(server.app);
    let answered = 0;
    // The requests that must have bound their values into a plan learnt before: of an operation whose
    // every field binds, all but its first request (the document is parsed) and each caller's first
    // after that (the plan is learnt).
    let mustHit = 0;
    await fc.assert(
      fc.asyncProperty(
        operationOf().chain((operation) =>
          fc.tuple(
            fc.constant(operation),
            fc.array(fc.tuple(...operation.kinds.map((k) => valuesFor(k, world, uuids))), {
              minLength: 4,
              maxLength: 6,
            }),
          ),
        ),
        async ([operation, valueSets]) => {
          if (operation.bound) mustHit += valueSets.length * callers.length - 1 - callers.length;
          for (const values of valueSets) {
            const variables = Object.fromEntries(values.map((value, i) => [`v${i}`, value]));
            for (const caller of callers) {
              const together = await send(server.app, caller, operation.query, variables);
              const each = await send(apart, caller, operation.query, variables);
              const context = `${caller}: ${operation.query} ${JSON.stringify(variables)}`;
              expect(comparable(together), context).toEqual(comparable(each));
              expect(JSON.stringify(together.data), context).toBe(JSON.stringify(each.data));
              if (!together.errors) expect(together.statements, context).toBeLessThanOrEqual(1);
              if (together.data && Object.values(together.data).some((v) => v !== null && v !== 0))
                answered++;
            }
          }
        },
      ),
      { numRuns: Number(process.env.DOCUMENT_PLANS_RUNS ?? 30), ...(seed !== undefined ? { seed } : {}) },
    );
    expect(answered).toBeGreaterThan(100);
    const after = await documentCache(server.app);
    expect(mustHit).toBeGreaterThan(50);
    expect(after.hit - before.hit).toBeGreaterThanOrEqual(mustHit);
  }, 600_000);

  it("300 aliases are planned once, and answer every set of keys in one statement", async () => {
    const aliases = 300;
    const query = `query Aliases(${Array.from({ length: aliases }, (_, i) => `$u${i}: String`).join(", ")}) { ${Array.from(
      { length: aliases },
      (_, i) => `a${i}: device(uuid: $u${i}) { id uuid deviceName isOnline }`,
    ).join(" ")} }`;
    const keys = [...uuids, "0".repeat(32), "missing"];
    const variablesOf = (round: number) =>
      Object.fromEntries(
        Array.from({ length: aliases }, (_, i) => [`u${i}`, keys[(i * 7 + round) % keys.length]]),
      );
    const before = await documentCache(server.app);
    for (let round = 0; round < 5; round++) {
      for (const caller of ["admin", "alice"] as const) {
        const variables = variablesOf(round);
        const together = await send(server.app, caller, query, variables);
        const each = await send(apart, caller, query, variables);
        expect(together.errors).toBeUndefined();
        expect(together.statements).toBe(1);
        expect(JSON.stringify(together.data)).toBe(JSON.stringify(each.data));
      }
    }
    // Each caller's first request parses the document, the second learns its plan, the rest bind.
    const after = await documentCache(server.app);
    expect(after.hit - before.hit).toBeGreaterThanOrEqual(6);
  }, 120_000);

  it("a variable that reaches a limit is not bound: a later value over it is the field's error", async () => {
    const query = "query Limit($n: Int) { devices(first: $n, orderBy: {id: ASC}) { id } }";
    for (const n of [1, 2, 3]) {
      const reply = await send(server.app, "admin", query, { n });
      expect((reply.data as { devices: unknown[] }).devices).toHaveLength(n);
    }
    const over = await send(server.app, "admin", query, { n: 5000 });
    expect(comparable(over)).toEqual(comparable(await send(apart, "admin", query, { n: 5000 })));
    expect(over.errors?.[0]?.message).toMatch(/first must be between/);
  });
});
