import { afterAll, beforeAll, expect } from "vitest";
import type { PrismaClient } from "../../../src/generated/prisma/client.ts";
import { seedDemo } from "../../../src/seed/demo.ts";
import type { DatabaseKind } from "../databases.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { type Exchange, type LatestSDK, latestSdkVersion, loggedSdk, sdkCalls } from "./balena-sdk.ts";

// The world of the SDK acceptance tests (test/clients/sdk-*.test.ts): the real server on one
// database with the demo data, a normal member of the demo organization created through the API,
// and one SDK line logged in as that member. Every effect of an SDK call is checked with Prisma,
// never through the OData API; every request is logged with the server's answer, and a failing
// call reports that log, so a failure names the exact request.

export type Api = "v6" | "v7";

/** The SDK line that speaks `api`: 19.7.3 for /v6/, the newest for /v7/. */
export const sdkLineOf = (api: Api) =>
  api === "v6" ? "balena-sdk 19.7.3" : `balena-sdk ${latestSdkVersion}`;

export interface Member {
  readonly id: number;
  readonly actor: number;
  readonly username: string;
  readonly email: string;
  readonly password: string;
}

export interface SdkWorld {
  readonly api: Api;
  readonly server: TestServer;
  readonly p: PrismaClient;
  /**
   * The SDK, logged in as the member. Typed as the newest line; 19.7.3 has the same calls for
   * everything these tests do (where the two differ, a test checks `api`).
   */
  readonly sdk: LatestSDK;
  readonly log: Exchange[];
  readonly member: Member;
  readonly orgId: number;
  readonly fleets: Record<"lights" | "weather" | "kiosks", { id: number; slug: string }>;
  /** Another SDK of the same line, not logged in (for the auth tests), with its own log. */
  freshSdk(): LoggedSdk;
  call: Calls["call"];
  requestsOf: Calls["requestsOf"];
  failure: Calls["failure"];
}

type Calls = ReturnType<typeof sdkCalls>;
type LoggedSdk = { sdk: LatestSDK; log: Exchange[] } & Calls;

function sdkOf(api: Api, url: string): LoggedSdk {
  // 19.7.3 has the newest line's calls, with the same shapes, for everything the tests use.
  const logged =
    api === "v7"
      ? loggedSdk(url, "latest")
      : (loggedSdk(url) as unknown as { sdk: LatestSDK; log: Exchange[] });
  return { ...logged, ...sdkCalls(logged.log) };
}

/**
 * Registers the world's set-up and tear-down; the returned object is filled in `beforeAll`. Each
 * `describe` of the scenario reads it inside its tests only.
 */
export function useSdkWorld(api: Api, kind: DatabaseKind, username: string): SdkWorld {
  const world = { api } as { -readonly [K in keyof SdkWorld]: SdkWorld[K] };
  beforeAll(async () => {
    const server = await startTestServer(kind);
    world.server = server;
    await seedDemo(server.test.db);
    const p = server.test.db.prisma;
    world.p = p;
    const fleet = (slug: string) => p.application.findUniqueOrThrow({ where: { slug } });
    world.fleets = {
      lights: await fleet("demo/smart-lights"),
      weather: await fleet("demo/weather-stations"),
      kiosks: await fleet("demo/kiosks"),
    };
    world.orgId = (await p.organization.findUniqueOrThrow({ where: { handle: "demo" } })).id;

    // A normal user, created through the API by the admin, and made a member of the demo organization.
    const credentials = { username, email: `${username}@example.com`, password: `${username}-pw-1` };
    const created = await server.app.inject({ method: "POST", url: "/v6/user", payload: credentials });
    expect(created.statusCode, `POST /v6/user: ${created.body}`).toBe(201);
    const user = await p.user.findUniqueOrThrow({ where: { username } });
    expect(user.is_admin).toBe(false);
    world.member = { id: user.id, actor: user.actor, ...credentials };
    const membership = await server.app.inject({
      method: "POST",
      url: "/v6/organization_membership",
      payload: { user: user.id, is_member_of__organization: world.orgId },
    });
    expect(membership.statusCode, `POST /v6/organization_membership: ${membership.body}`).toBe(201);

    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username, password: credentials.password }),
    });
    const jwt = await login.text();
    expect(login.status, `POST /login_: ${jwt}`).toBe(200);

    const { sdk, log, call, requestsOf, failure } = sdkOf(api, server.url);
    Object.assign(world, { sdk, log, call, requestsOf, failure });
    world.freshSdk = () => sdkOf(api, server.url);
    await world.call("auth.loginWithToken", () => sdk.auth.loginWithToken(jwt));
  });
  afterAll(async () => {
    await world.server?.close();
  });
  return world;
}

/** The `index`-th device of a fleet, by id. */
export async function deviceOf(world: SdkWorld, fleetId: number, index = 0) {
  const devices = await world.p.device.findMany({
    where: { belongs_to__application: fleetId },
    orderBy: { id: "asc" },
  });
  const device = devices[index];
  if (!device) throw new Error(`fleet ${fleetId} has no device ${index}`);
  return device;
}

/** The request line of a logged exchange with its query decoded, for readable assertions. */
export const decoded = (request: string) => decodeURIComponent(request);
