import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Result, type Subscription, subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 27, item 4: a subscription's arguments hold whether they are written inline or passed as
// variables (of any name), over both forms of SSE: POST with `Accept: text/event-stream` and
// GET /graphql?query=…. Each stream must see the one row it asked for and nothing of its twin,
// which changes first.

interface DeviceEvent {
  deviceChanged: { id: number; status: string | null };
}
interface FleetEvent {
  fleetChanged: { id: number; appName: string };
}
interface JobEvent {
  commandJob: { id: number; status: string };
}

const methods = ["POST", "GET"] as const;

describe.each(databaseKinds)("subscription arguments on %s", (kind) => {
  let server: TestServer;
  let token: string;
  const fleets: number[] = [];
  const devices: { id: number; uuid: string; key: string }[] = [];
  const streams: Subscription<unknown>[] = [];

  const send = (method: Method, url: string, payload?: unknown, bearer?: string, headers = {}) =>
    injectJson(server, method, url, payload, {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...headers,
    });

  async function open<T>(
    method: "POST" | "GET",
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<Subscription<T>> {
    const stream = await subscribe<T>(server.url, token, query, variables, method);
    streams.push(stream as Subscription<unknown>);
    return stream;
  }

  /** A state report of the device itself: it is announced on the change bus. */
  async function report(device: { uuid: string; key: string }, status: string) {
    const reported = await send("PATCH", `/device/v2/${device.uuid}/state`, { status }, device.key);
    expect(reported.status, reported.raw).toBe(200);
  }

  beforeAll(async () => {
    server = await startTestServer(kind, { DEVICE_OFFLINE_TIMEOUT: "3600" });
    await loadDefaultCatalogue(server.test.db);
    const user = await send("POST", "/v6/user", {
      username: "erin",
      email: "erin@example.com",
      password: "erin-password",
    });
    expect(user.status, user.raw).toBe(201);
    token = (await send("POST", "/login_", { username: "erin", password: "erin-password" })).raw;
    for (const name of ["erin-one", "erin-two"]) {
      const fleet = await send(
        "POST",
        "/v6/application",
        { app_name: name, device_type: "raspberrypi4-64" },
        token,
      );
      expect(fleet.status, fleet.raw).toBe(201);
      fleets.push((fleet.body as { id: number }).id);
    }
    const first = fleets[0] as number;
    for (const uuid of ["a".repeat(32), "b".repeat(32)]) {
      const registered = await send("POST", "/device/register", { application: first, uuid }, token);
      expect(registered.status, registered.raw).toBe(201);
      const { id, api_key } = registered.body as { id: number; api_key: string };
      devices.push({ id, uuid, key: api_key });
    }
  }, 120_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await server?.close();
  }, 60_000);

  for (const method of methods) {
    it(`deviceChanged(where:) inline and as variables, over ${method}`, async () => {
      const [wanted, other] = devices as [(typeof devices)[0], (typeof devices)[0]];
      const where = { id: { eq: wanted.id } };
      const opened = [
        await open<DeviceEvent>(
          method,
          `subscription { deviceChanged(where: {id: {eq: ${wanted.id}}}) { id status } }`,
        ),
        await open<DeviceEvent>(
          method,
          "subscription ($where: DeviceWhere) { deviceChanged(where: $where) { id status } }",
          { where },
        ),
        // A variable named otherwise than the argument it fills.
        await open<DeviceEvent>(
          method,
          "subscription ($only: DeviceWhere) { deviceChanged(where: $only) { id status } }",
          { only: where },
        ),
        await open<DeviceEvent>(
          method,
          "subscription ($id: Int) { deviceChanged(where: {id: {eq: $id}}) { id status } }",
          { id: wanted.id },
        ),
      ];
      const status = `${method}-${Date.now()}`;
      await report(other, status);
      await report(wanted, status);
      for (const stream of opened) {
        await stream.until((r) => r.data?.deviceChanged.status === status, `device ${wanted.id}`, 10_000);
        expect(stream.results.filter((r) => r.errors)).toEqual([]);
        expect(stream.results.map((r) => r.data?.deviceChanged.id)).not.toContain(other.id);
      }
    });

    it(`fleetChanged(where:) inline and as variables, over ${method}`, async () => {
      const [wanted, other] = fleets as [number, number];
      const opened = [
        await open<FleetEvent>(
          method,
          `subscription { fleetChanged(where: {id: {eq: ${wanted}}}) { id appName } }`,
        ),
        await open<FleetEvent>(
          method,
          "subscription ($filter: ApplicationWhere) { fleetChanged(where: $filter) { id appName } }",
          { filter: { id: { eq: wanted } } },
        ),
      ];
      // Fleet names are unique: each gets its own.
      const nameOf = (id: number) => `renamed-${method.toLowerCase()}-${id}`;
      for (const id of [other, wanted]) {
        const renamed = await send("PATCH", `/v6/application(${id})`, { app_name: nameOf(id) }, token);
        expect(renamed.status, renamed.raw).toBe(200);
      }
      for (const stream of opened) {
        await stream.until((r) => r.data?.fleetChanged.appName === nameOf(wanted), `fleet ${wanted}`, 10_000);
        expect(stream.results.filter((r) => r.errors)).toEqual([]);
        expect(stream.results.map((r) => r.data?.fleetChanged.id)).not.toContain(other);
      }
    });

    it(`commandJob(id:) inline and as variables, over ${method}`, async () => {
      for (const device of devices) await report(device, "Idle");
      const submitted = await send("POST", "/supervisor/v1/blink", { appId: fleets[0] }, token, {
        prefer: "respond-async",
      });
      expect(submitted.status, submitted.raw).toBe(202);
      const id = (submitted.body as { id: number }).id;
      const opened = [
        await open<JobEvent>(method, `subscription { commandJob(id: ${id}) { id status } }`),
        await open<JobEvent>(method, "subscription ($id: Int!) { commandJob(id: $id) { id status } }", {
          id,
        }),
        await open<JobEvent>(method, "subscription ($job: Int!) { commandJob(id: $job) { id status } }", {
          job: id,
        }),
      ];
      for (const stream of opened) {
        const first = await stream.until(
          (r: Result<JobEvent>) => r.data !== undefined || r.errors !== undefined,
          `job ${id}`,
          10_000,
        );
        expect(first.errors).toBeUndefined();
        expect(first.data?.commandJob.id).toBe(id);
      }
    });
  }
});
