import { type Client, createClient } from "graphql-sse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { plainly } from "../support/graphql/graphql-clients.ts";
import { buildMatrixWorld, type World } from "../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 47: graphql-sse's single connection mode, with the graphql-sse client itself (PUT reserves
// a stream, GET opens it, POSTs run operations on it, DELETE stops one), and a reservation that
// belongs to the credential that made it.

interface Sent {
  readonly method: string;
  readonly status: number;
}

describe.each(databaseKinds)("graphql-sse single connection mode on %s", (kind) => {
  let server: TestServer;
  let world: World;
  const clients: Client<true>[] = [];

  function client(token: string, sent: Sent[]): Client<true> {
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      sent.push({ method: init?.method ?? "GET", status: response.status });
      return response;
    };
    const created = createClient({
      url: `${server.url}/graphql`,
      singleConnection: true,
      headers: { authorization: `Bearer ${token}` },
      fetchFn: recording,
      retryAttempts: 0,
      // One stream for the client's life, not one per burst of operations.
      lazy: false,
      onNonLazyError: () => {},
    });
    clients.push(created);
    return created;
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
  }, 120_000);

  afterAll(async () => {
    for (const one of clients) one.dispose();
    await server?.close();
  });

  it("reserves, opens, runs queries and subscriptions on one stream, and stops them", async () => {
    const sent: Sent[] = [];
    const sse = client(world.creds.alice, sent);
    const query = `{ applications(orderBy: [{id: ASC}]) { id appName ownsDeviceCount } }`;
    const results: unknown[] = [];
    await new Promise<void>((resolve, reject) => {
      sse.subscribe({ query }, { next: (value) => results.push(value), error: reject, complete: resolve });
    });
    const plain = await plainly(
      server,
      { headers: { authorization: `Bearer ${world.creds.alice}` }, params: {} },
      query,
    );
    expect(results).toEqual([plain.body]);
    expect(sent.slice(0, 3)).toEqual([
      { method: "PUT", status: 201 },
      { method: "GET", status: 200 },
      { method: "POST", status: 202 },
    ]);

    const events: { data?: { fleetChanged: { appName: string } } }[] = [];
    const stop = sse.subscribe<{ fleetChanged: { appName: string } }>(
      { query: `subscription { fleetChanged(where: {id: {eq: ${world.fleets.a1}}}) { appName } }` },
      { next: (value) => events.push(value as never), error: () => {}, complete: () => {} },
    );
    const until = Date.now() + 30_000;
    for (let attempt = 0; events.length === 0; attempt++) {
      if (Date.now() > until) throw new Error("no event in 30 s");
      await server.app.inject({
        method: "PATCH",
        url: `/v6/application(${world.fleets.a1})`,
        payload: { app_name: `sse-${attempt}` },
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(events[0]?.data?.fleetChanged.appName).toMatch(/^sse-/);
    stop();
    // The client's DELETE stops the operation on the server.
    const deadline = Date.now() + 10_000;
    while (!sent.some((one) => one.method === "DELETE") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent.filter((one) => one.method === "DELETE")).toEqual([{ method: "DELETE", status: 200 }]);
    // One stream for everything.
    expect(sent.filter((one) => one.method === "PUT" || one.method === "GET")).toHaveLength(2);
  }, 90_000);

  it("keeps a reservation to the credential that made it", async () => {
    const as = (token: string | undefined): Record<string, string> =>
      token ? { authorization: `Bearer ${token}` } : {};
    const put = await fetch(`${server.url}/graphql`, { method: "PUT", headers: as(world.creds.alice) });
    expect(put.status).toBe(201);
    const token = await put.text();
    const body = JSON.stringify({ query: "{ devicesCount }", extensions: { operationId: "1" } });
    for (const other of [world.creds.bob, undefined]) {
      const opened = await fetch(`${server.url}/graphql?token=${token}`, {
        headers: { ...as(other), accept: "text/event-stream" },
      });
      expect(opened.status).toBe(404);
      const posted = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...as(other), "content-type": "application/json", "x-graphql-event-stream-token": token },
        body,
      });
      expect(posted.status).toBe(404);
    }
    // Nothing runs on a stream not yet open.
    const early = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: {
        ...as(world.creds.alice),
        "content-type": "application/json",
        "x-graphql-event-stream-token": token,
      },
      body,
    });
    expect(early.status).toBe(404);
    const unknown = await fetch(`${server.url}/graphql?operationId=1`, {
      method: "DELETE",
      headers: { ...as(world.creds.alice), "x-graphql-event-stream-token": "no-such-token" },
    });
    expect(unknown.status).toBe(404);
  }, 30_000);
});
