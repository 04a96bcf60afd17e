import { type Client, createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 45, item 2: a graphql-ws connection may present a credential in three places (its
// connectionParams, the upgrade request's Authorization header, the upgrade's ?apikey=). Every one
// presented must be valid (else 4401), and they must all be the same credential (else 4403): a
// connection never acts with the better of two. With the graphql-ws client itself, over a real
// socket.

/** A credential in one place: none, the owner's key, another user's key, or an invalid one. */
type Given = "none" | "owner" | "other" | "invalid";
const givens: readonly Given[] = ["none", "owner", "other", "invalid"];

/** What became of a connection: refused with a close code, or what it read of the owner's fleet. */
type Outcome = { closed: number } | { read: number | null };

describe.each(databaseKinds)("the credentials of a GraphQL WebSocket on %s", (kind) => {
  let server: TestServer;
  let fleet: number;
  /** The owner's session token and API key, and another user's key (who may not read the fleet). */
  const tokens = { session: "", owner: "", other: "" };

  const send = (method: Method, url: string, payload?: unknown, bearer?: string) =>
    injectJson(server, method, url, payload, bearer ? { authorization: `Bearer ${bearer}` } : {});

  async function user(name: string): Promise<{ session: string; key: string }> {
    const made = await send("POST", "/v6/user", {
      username: name,
      email: `${name}@example.com`,
      password: `${name}-password`,
    });
    expect(made.status, made.raw).toBe(201);
    const session = (await send("POST", "/login_", { username: name, password: `${name}-password` })).raw;
    const key = await send("POST", "/api-key/user/full", { name }, session);
    expect(key.status, key.raw).toBe(200);
    return { session, key: key.body as string };
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    await loadDefaultCatalogue(server.test.db);
    const owner = await user("wscredowner");
    tokens.session = owner.session;
    tokens.owner = owner.key;
    tokens.other = (await user("wscredother")).key;
    const created = await send(
      "POST",
      "/v6/application",
      { app_name: "wscredfleet", device_type: "raspberrypi4-64" },
      tokens.owner,
    );
    expect(created.status, created.raw).toBe(201);
    fleet = (created.body as { id: number }).id;
  }, 120_000);
  afterAll(() => server?.close());

  /** Connects with the upgrade's headers, its query and connectionParams, and reads the fleet. */
  async function outcomeOf(
    headers: Record<string, string>,
    query: string,
    connectionParams: Record<string, unknown> | undefined,
  ): Promise<Outcome> {
    let closed: (code: number) => void = () => {};
    const closing = new Promise<number>((resolve) => {
      closed = resolve;
    });
    // The upgrade request's own headers: what a server-side client (not a browser) may send.
    class WithHeaders extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    }
    const client: Client = createClient({
      url: `${server.url.replace("http", "ws")}/graphql${query}`,
      webSocketImpl: WithHeaders,
      lazy: false,
      retryAttempts: 0,
      ...(connectionParams ? { connectionParams } : {}),
      on: { closed: (event) => closed((event as { code: number }).code) },
      onNonLazyError: () => {},
    });
    try {
      const read = new Promise<Outcome | undefined>((resolve) => {
        let result: { data?: { application: { id: number } | null } | null } | undefined;
        client.subscribe<{ application: { id: number } | null }>(
          { query: `{ application(id: ${fleet}) { id } }` },
          {
            next: (value) => (result = value),
            error: () => resolve(undefined),
            complete: () => resolve({ read: result?.data?.application?.id ?? null }),
          },
        );
      });
      const first = await Promise.race([read, closing.then((code) => ({ closed: code }))]);
      return first ?? { closed: await closing };
    } finally {
      await client.dispose();
    }
  }

  const tokenOf = (given: Given) =>
    given === "owner" ? tokens.owner : given === "other" ? tokens.other : "not-a-credential";

  /** The rules (README "Over WebSocket"), written out: the outcome of a connection presenting `givens`. */
  function expected(presented: readonly Given[]): Outcome {
    const some = presented.filter((given) => given !== "none");
    if (some.includes("invalid")) return { closed: 4401 };
    if (new Set(some).size > 1) return { closed: 4403 };
    return { read: some[0] === "owner" ? fleet : null };
  }

  it("follows the rules for every placement of credentials: all valid and the same, or refused", async () => {
    const seen: string[] = [];
    const wanted: string[] = [];
    for (const params of givens)
      for (const header of givens)
        for (const apikey of givens) {
          const outcome = await outcomeOf(
            header === "none" ? {} : { authorization: `Bearer ${tokenOf(header)}` },
            apikey === "none" ? "" : `?apikey=${encodeURIComponent(tokenOf(apikey))}`,
            params === "none" ? undefined : { Authorization: `Bearer ${tokenOf(params)}` },
          );
          const name = `params ${params}, header ${header}, ?apikey= ${apikey}`;
          seen.push(`${name}: ${JSON.stringify(outcome)}`);
          wanted.push(`${name}: ${JSON.stringify(expected([params, header, apikey]))}`);
        }
    expect(seen).toEqual(wanted);
  }, 120_000);

  it("refuses an invalid upgrade credential beside a valid connectionParams one (4401)", async () => {
    const valid = { Authorization: `Bearer ${tokens.owner}` };
    expect(await outcomeOf({ authorization: "Bearer not-a-credential" }, "", valid)).toEqual({
      closed: 4401,
    });
    // Another scheme than Bearer names no credential: invalid too.
    expect(await outcomeOf({ authorization: `Basic ${tokens.owner}` }, "", valid)).toEqual({ closed: 4401 });
    // So is a connectionParams Authorization that is not text, whatever the upgrade carries.
    expect(await outcomeOf({ authorization: `Bearer ${tokens.owner}` }, "", { Authorization: 42 })).toEqual({
      closed: 4401,
    });
  });

  it("compares the token text: one user's session and key are two credentials; the same one spelt apart is one", async () => {
    expect(
      await outcomeOf({ authorization: `Bearer ${tokens.owner}` }, "", {
        Authorization: `Bearer ${tokens.session}`,
      }),
    ).toEqual({ closed: 4403 });
    expect(
      await outcomeOf({ authorization: `bearer   ${tokens.session}` }, `?apikey=${tokens.session}`, {
        authorization: `Bearer ${tokens.session}`,
      }),
    ).toEqual({ read: fleet });
    // Both spellings of connectionParams' member, different: two credentials.
    expect(
      await outcomeOf({}, "", {
        Authorization: `Bearer ${tokens.owner}`,
        authorization: `Bearer ${tokens.session}`,
      }),
    ).toEqual({ closed: 4403 });
  });
});
