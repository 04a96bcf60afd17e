import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { databaseKinds } from "../support/databases.ts";
import { buildMatrixWorld, type World, whoIs } from "../support/matrix/matrix-build.ts";
import {
  type ActorName,
  actorNames,
  loadState,
  Oracle,
  type Row,
  type State,
} from "../support/matrix/matrix-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 15's proxy rule, as a matrix: every kind of caller × every device of the world (and every
// fleet, by appId) × a read and a write command, through POST /supervisor/<path> and the GraphQL
// supervisor fields. The proxy targets only devices the caller may write, GET included; a device they
// cannot see answers exactly as one that does not exist. Every device of the world is online and
// "listens" on one loopback server standing in for its supervisor, which records who was called.

const NOWHERE_UUID = "0".repeat(32);
const NOWHERE_ID = 987_654;

interface Answer {
  readonly status: number;
  readonly body: string;
}

describe.each(databaseKinds)("the proxy's permission matrix on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let state: State;
  let supervisor: Server;
  /** The device ids whose supervisor was called, in order. */
  const called: number[] = [];
  /** The world's devices (not the demo data's). */
  let devices: Row[];

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
    supervisor = createServer((request, response) => {
      const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
      called.push(Number(key.replace("key-", "")));
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ answered: key, method: request.method }));
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    const port = (supervisor.address() as { port: number }).port;
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const box = new KeyBox(secret?.value ?? "");
    const ours = Object.values(world.devices).filter((id) => id > world.baseline.device);
    for (const id of ours)
      await server.test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = '17.0.0' WHERE "id" = $1::int4`,
        values: [id, port, box.seal(`key-${id}`)],
      });
    state = await loadState(server.test.db.prisma);
    devices = state.device.filter((d) => ours.includes(d.id));
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => supervisor?.close(resolve));
    await server?.close();
  });

  function credentials(actor: ActorName): { headers: Record<string, string>; query: string } {
    switch (actor) {
      case "admin":
        return { headers: {}, query: "" };
      case "fleet":
        return { headers: { authorization: "" }, query: `?apikey=${world.creds.fleet}` };
      case "none":
        return { headers: { authorization: "" }, query: "" };
      default:
        return { headers: { authorization: `Bearer ${world.creds[actor]}` }, query: "" };
    }
  }

  async function viaHttp(actor: ActorName, path: string, body: object): Promise<Answer> {
    const { headers, query } = credentials(actor);
    const response = await server.app.inject({
      method: "POST",
      url: `/supervisor${path}${query}`,
      headers: { ...headers, "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    return { status: response.statusCode, body: response.body };
  }

  /** A GraphQL supervisor field; the answer is the error's code and message, or the results' statuses. */
  async function viaGraphQL(actor: ActorName, field: string, target: string): Promise<Answer> {
    const { headers, query } = credentials(actor);
    const operation = field === "supervisorDeviceState" ? "query" : "mutation";
    const response = await server.app.inject({
      method: "POST",
      url: `/graphql${query}`,
      headers: { ...headers, "content-type": "application/json" },
      payload: JSON.stringify({
        query: `${operation} { ${field}(target: ${target}) { targets results { deviceId statusCode } } }`,
      }),
    });
    const reply = JSON.parse(response.body) as {
      data?: Record<string, { results: { deviceId: number; statusCode: number }[] } | null> | null;
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    const [error] = reply.errors ?? [];
    if (error) return { status: response.statusCode, body: `${error.extensions?.code}: ${error.message}` };
    const results = reply.data?.[field]?.results ?? [];
    return {
      status: response.statusCode,
      body: JSON.stringify(results.map((r) => [r.deviceId, r.statusCode])),
    };
  }

  const oracle = (actor: ActorName) => new Oracle(state, whoIs(world, actor, state));

  /**
   * What the rule says for these targets: only a user's credential commands devices; none visible is
   * the 404 of a device that does not exist; any visible but not writable is a 403; else each is called.
   */
  function verdict(
    actor: ActorName,
    targets: readonly Row[],
  ): "401" | "user only" | "404" | "403" | "called" {
    if (actor === "none") return "401";
    if (actor === "device" || actor === "fleet") return "user only";
    const o = oracle(actor);
    const visible = targets.filter((d) => o.readable("device", d));
    if (visible.length === 0) return "404";
    return visible.every((d) => o.writable("device", d)) ? "called" : "403";
  }

  const commands = [
    { method: "GET", path: "/v1/device", field: "supervisorDeviceState" },
    { method: "POST", path: "/v1/blink", field: "supervisorBlink" },
  ] as const;

  describe.each(actorNames)("as %s", (actor) => {
    it("POST /supervisor/<path> by uuid and by deviceId: writable devices only, hidden ones as absent", async () => {
      const absent = {
        GET: await viaHttp(actor, "/v1/device", { uuid: NOWHERE_UUID, method: "GET" }),
        POST: await viaHttp(actor, "/v1/blink", { deviceId: NOWHERE_ID }),
      };
      const expected: string[] = [];
      const actual: string[] = [];
      for (const device of devices) {
        for (const { method, path } of commands) {
          for (const target of [{ uuid: device.uuid }, { deviceId: device.id }]) {
            called.length = 0;
            const answer = await viaHttp(actor, path, { ...target, method });
            const label = `${method} ${path} ${JSON.stringify(target)}`;
            const rule = verdict(actor, [device]);
            const want =
              rule === "called"
                ? `200, called [${device.id}]`
                : rule === "404"
                  ? `${absent[method].status} ${absent[method].body}, called []`
                  : `${rule === "user only" || rule === "401" ? 401 : 403}, called []`;
            expected.push(`${label}: ${want}`);
            actual.push(
              `${label}: ${answer.status}${rule === "404" ? ` ${answer.body}` : ""}, called ${JSON.stringify(called)}`,
            );
          }
        }
      }
      expect(actual).toEqual(expected);
      if (actor !== "none" && actor !== "device" && actor !== "fleet") expect(absent.GET.status).toBe(404);
    });

    it("POST /supervisor/ping by appId: every fleet of the world", async () => {
      const absent = await viaHttp(actor, "/ping", { appId: NOWHERE_ID, method: "GET" });
      const expected: string[] = [];
      const actual: string[] = [];
      // The world's own fleets: the demo fleets' online devices never said where they listen.
      for (const name of ["a1", "a2", "b1", "b2", "c1"] as const) {
        const fleet = world.fleets[name];
        const targets = devices.filter((d) => d.belongs_to__application === fleet);
        called.length = 0;
        const answer = await viaHttp(actor, "/ping", { appId: fleet, method: "GET" });
        const rule = verdict(actor, targets);
        const o = actor === "none" ? undefined : oracle(actor);
        const reached = targets
          .filter((d) => o?.readable("device", d))
          .map((d) => d.id)
          .sort((a, b) => a - b);
        const want =
          rule === "called"
            ? `${reached.length === 1 ? 200 : 207}, called ${JSON.stringify(reached)}`
            : rule === "404"
              ? `${absent.status} ${absent.body}, called []`
              : `${rule === "403" ? 403 : 401}, called []`;
        expected.push(`${name}: ${want}`);
        const got = [...called].sort((a, b) => a - b);
        actual.push(
          `${name}: ${answer.status}${rule === "404" ? ` ${answer.body}` : ""}, called ${JSON.stringify(got)}`,
        );
      }
      expect(actual).toEqual(expected);
    });

    it("the GraphQL supervisor fields follow the same rule", async () => {
      const absent = {
        supervisorDeviceState: await viaGraphQL(actor, "supervisorDeviceState", `{uuid: "${NOWHERE_UUID}"}`),
        supervisorBlink: await viaGraphQL(actor, "supervisorBlink", `{deviceId: ${NOWHERE_ID}}`),
      };
      const expected: string[] = [];
      const actual: string[] = [];
      for (const device of devices) {
        for (const { field } of commands) {
          const target =
            field === "supervisorBlink" ? `{deviceId: ${device.id}}` : `{uuid: "${device.uuid}"}`;
          called.length = 0;
          const answer = await viaGraphQL(actor, field, target);
          const rule = verdict(actor, [device]);
          const want =
            rule === "called"
              ? `${JSON.stringify([[device.id, 200]])}, called [${device.id}]`
              : rule === "404"
                ? `${absent[field].body}, called []`
                : rule === "401"
                  ? "UNAUTHENTICATED, called []"
                  : "FORBIDDEN, called []";
          expected.push(`${field} #${device.id}: ${want}`);
          const shown =
            rule === "401" || rule === "user only" || rule === "403"
              ? answer.body.split(":")[0]
              : answer.body;
          actual.push(`${field} #${device.id}: ${shown}, called ${JSON.stringify(called)}`);
        }
      }
      expect(actual).toEqual(expected);
      if (verdict(actor, []) === "404") expect(absent.supervisorBlink.body).toMatch(/^NOT_FOUND: /);
    });
  });

  it("the matrix is not vacuous: each verdict occurs, and only write commands are recorded", async () => {
    const verdicts = new Set(
      actorNames.flatMap((actor) => devices.map((device) => verdict(actor, [device]))),
    );
    expect([...verdicts].sort()).toEqual(["401", "403", "404", "called", "user only"]);
    const commandsRecorded = await server.test.db.query<{ method: string }>({
      text: `SELECT DISTINCT "method" FROM "supervisor_command"`,
      values: [],
    });
    expect(commandsRecorded.map((row) => row.method)).toEqual(["POST"]);
  });
});
