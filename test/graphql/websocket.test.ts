import { type Client, createClient } from "graphql-ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 31: GraphQL over WebSocket (graphql-ws), as Apollo Client, urql and Relay speak it, with the
// graphql-ws client itself: the same permissions and rules as over HTTP and SSE.

/** A result as the client hands it over. */
interface ExecutionResult<T> {
  readonly data?: T | null;
  readonly errors?: readonly { readonly message: string; readonly extensions?: Record<string, unknown> }[];
}

describe.each(databaseKinds)("GraphQL over WebSocket on %s", (kind) => {
  let server: TestServer;
  const clients: Client[] = [];
  let owner: { id: number; token: string };
  let fleet: number;

  const send = (method: Method, url: string, payload?: unknown, bearer?: string) =>
    injectJson(server, method, url, payload, bearer ? { authorization: `Bearer ${bearer}` } : {});

  /** A client that connects at once, and tells how its connection was closed. */
  function connect(connectionParams?: Record<string, unknown>, path = "/graphql") {
    let closed: (event: { code: number; reason: string }) => void = () => {};
    const closing = new Promise<{ code: number; reason: string }>((resolve) => {
      closed = resolve;
    });
    const client = createClient({
      url: `${server.url.replace("http", "ws")}${path}`,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      ...(connectionParams ? { connectionParams } : {}),
      on: { closed: (event) => closed(event as { code: number; reason: string }) },
      onNonLazyError: () => {},
    });
    clients.push(client);
    return { client, closing };
  }

  function query<T>(client: Client, text: string): Promise<ExecutionResult<T>> {
    return new Promise((resolve, reject) => {
      let result: ExecutionResult<T> | undefined;
      client.subscribe<T>(
        { query: text },
        {
          next: (value) => (result = value),
          error: reject,
          complete: () => resolve(result as ExecutionResult<T>),
        },
      );
    });
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    const made = await send("POST", "/v6/user", {
      username: "wsowner",
      email: "wsowner@example.com",
      password: "wsowner-password",
    });
    const login = await send("POST", "/login_", { username: "wsowner", password: "wsowner-password" });
    owner = { id: (made.body as { id: number }).id, token: login.raw };
    await loadDefaultCatalogue(server.test.db);
    const created = await send(
      "POST",
      "/v6/application",
      { app_name: "wsfleet", device_type: "raspberrypi4-64" },
      owner.token,
    );
    expect(created.status, created.raw).toBe(201);
    fleet = (created.body as { id: number }).id;
  }, 120_000);
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.dispose();
  });
  afterAll(() => server?.close());

  it("answers a query with the credential of connectionParams, as over HTTP", async () => {
    const { client } = connect({ Authorization: `Bearer ${owner.token}` });
    const text = `{ application(id: ${fleet}) { id appName } }`;
    const overWs = await query(client, text);
    const overHttp = await send("POST", "/graphql", { query: text }, owner.token);
    expect(overWs).toEqual(overHttp.body);
    expect(overWs.data).toEqual({ application: { id: fleet, appName: "wsfleet" } });
  });

  it("without a credential reads what a guest reads: not a private fleet", async () => {
    const { client } = connect();
    const result = await query(client, `{ application(id: ${fleet}) { id } }`);
    expect(result).toEqual({ data: { application: null } });
  });

  it("takes the credential from ?apikey= of the upgrade too", async () => {
    const key = await send("POST", "/api-key/user/full", { name: "ws" }, owner.token);
    expect(key.status, key.raw).toBe(200);
    const { client } = connect(undefined, `/graphql?apikey=${key.body as string}`);
    const result = await query(client, `{ application(id: ${fleet}) { id } }`);
    expect(result).toEqual({ data: { application: { id: fleet } } });
  });

  it("acts on the credential as it is now: a deleted key's next operation on the same connection is refused", async () => {
    const key = await send("POST", "/api-key/user/full", { name: "ws-later" }, owner.token);
    const { client } = connect({ Authorization: `Bearer ${key.body as string}` });
    const text = `{ application(id: ${fleet}) { id } }`;
    expect(await query(client, text)).toEqual({ data: { application: { id: fleet } } });
    const keys = (
      await send("GET", "/v6/api_key?$filter=name eq 'ws-later'&$select=id", undefined, owner.token)
    ).body as { d: { id: number }[] };
    expect((await send("DELETE", `/v6/api_key(${keys.d[0]?.id})`, undefined, owner.token)).status).toBe(200);
    const after = await query<{ application: { id: number } | null }>(client, text);
    expect(after.data?.application ?? null).toBeNull();
    expect(after.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    // Naming why, as the end of a subscription does.
    expect(after.errors?.[0]?.message).toBe("The credential is unknown or was revoked");
    // Refused before anything runs, a query that reads nothing of the caller too.
    const typename = await query<{ __typename: string }>(client, "{ __typename }");
    expect(typename.data ?? null).toBeNull();
    expect(typename.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("refuses an invalid credential: 4401, never anonymous", async () => {
    const { client, closing } = connect({ Authorization: "Bearer not-a-credential" });
    const answer = query(client, "{ applications { id } }").catch((error: unknown) => error);
    expect((await closing).code).toBe(4401);
    expect(await answer).toBeTruthy();
  });

  it("streams a subscription, and ends it when its credential is deleted", async () => {
    const key = await send("POST", "/api-key/user/full", { name: "ws-sub" }, owner.token);
    const secret = key.body as string;
    const { client } = connect({ Authorization: `Bearer ${secret}` });
    const events: ExecutionResult<{ fleetChanged: { appName: string } }>[] = [];
    let completed = false;
    // Waits for an event that `wanted` accepts.
    const arrived = (what: string, wanted: (event: (typeof events)[number]) => boolean) =>
      new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const look = () => {
          if (events.some(wanted)) resolve();
          else if (Date.now() - started > 10_000)
            reject(new Error(`no ${what} in ${events.length} events: ${JSON.stringify(events)}`));
          else setTimeout(look, 50);
        };
        look();
      });
    client.subscribe<{ fleetChanged: { appName: string } }>(
      { query: `subscription { fleetChanged(where: {id: {eq: ${fleet}}}) { appName } }` },
      { next: (value) => events.push(value), error: () => {}, complete: () => (completed = true) },
    );
    // Live once it sees a change: rename until it does (its start reads a baseline first, which a
    // loaded machine makes slow).
    const liveBy = Date.now() + 30_000;
    for (let attempt = 0; events.length === 0 && Date.now() < liveBy; attempt++) {
      await send("PATCH", `/v6/application(${fleet})`, { app_name: `wsfleet-${attempt}` }, owner.token);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await arrived("change", () => true);
    expect(events[0]?.data?.fleetChanged.appName).toMatch(/^wsfleet-/);

    const keys = (
      await send("GET", "/v6/api_key?$filter=name eq 'ws-sub'&$select=id", undefined, owner.token)
    ).body as { d: { id: number }[] };
    expect(keys.d).toHaveLength(1);
    const deleted = await send("DELETE", `/v6/api_key(${keys.d[0]?.id})`, undefined, owner.token);
    expect(deleted.status, deleted.raw).toBe(200);
    // The stream may end before the DELETE's answer is read here: counting events from then on
    // would miss it.
    await arrived("error", (event) => event.errors !== undefined);
    const last = events.at(-1);
    expect(last?.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    const until = Date.now() + 5_000;
    while (!completed && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(completed).toBe(true);
    await send("PATCH", `/v6/application(${fleet})`, { app_name: "wsfleet" }, owner.token);
  }, 60_000);
});

describe("a server that stops with WebSocket clients connected", () => {
  it("closes them (1001, going away) and stops at once", async () => {
    const server = await startTestServer("embedded");
    let closed: (code: number) => void = () => {};
    const closing = new Promise<number>((resolve) => {
      closed = resolve;
    });
    const client = createClient({
      url: `${server.url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      on: { closed: (event) => closed((event as { code: number }).code) },
      onNonLazyError: () => {},
    });
    try {
      const first = await new Promise((resolve, reject) =>
        client.subscribe(
          { query: "{ applicationsCount }" },
          { next: resolve, error: reject, complete: () => {} },
        ),
      );
      expect(first).toEqual({ data: { applicationsCount: 0 } });
      client.subscribe(
        { query: "subscription { fleetChanged { id } }" },
        { next: () => {}, error: () => {}, complete: () => {} },
      );
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await closing).toBe(1001);
    } finally {
      await client.dispose();
    }
  }, 60_000);
});
