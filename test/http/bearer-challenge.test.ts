import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 31: RFC 9110 §15.5.2 — a 401 carries WWW-Authenticate, on every surface that answers one:
// OData, the proxy, the device API and the auth routes (GraphQL answers an unauthenticated
// operation with a 200 and UNAUTHENTICATED errors, as GraphQL over HTTP does). Real HTTP, as a
// client without a credential sends it.

const json = { "content-type": "application/json" };
const invalid = { authorization: "Bearer not-a-credential-of-this-server" };

describe.each(databaseKinds)("WWW-Authenticate on %s", (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind, { METRICS_TOKEN: "a-metrics-token-of-16+" });
  });
  afterAll(() => server.close());

  const refusals: [string, string, RequestInit][] = [
    ["an OData read with an invalid credential", "/v6/device", { headers: invalid }],
    [
      "an OData write without a credential",
      "/v6/application",
      { method: "POST", headers: json, body: JSON.stringify({ app_name: "x", device_type: "y" }) },
    ],
    [
      "a proxy command without a credential",
      "/supervisor/v1/blink",
      { method: "POST", headers: json, body: JSON.stringify({ appId: 1 }) },
    ],
    ["a device's target without its key", `/device/v2/${"a".repeat(32)}/state`, {}],
    ["whoami without a credential", "/actor/v1/whoami", {}],
    [
      "a GraphQL query with an invalid credential",
      "/graphql",
      { method: "POST", headers: { ...invalid, ...json }, body: JSON.stringify({ query: "{ __typename }" }) },
    ],
  ];

  it.each(refusals)("%s: 401 with WWW-Authenticate: Bearer", async (_what, path, init) => {
    const response = await fetch(`${server.url}${path}`, init);
    expect(response.status, await response.text()).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="fleetgate"');
  });

  it("keeps a route's own challenge, and says nothing on an answer that is not a 401", async () => {
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(401);
    expect(metrics.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    const read = await fetch(`${server.url}/v6/device`, {
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("www-authenticate")).toBeNull();
  });

  it("lets a browser front-end read the challenge (CORS)", async () => {
    const response = await fetch(`${server.url}/v6/device`, {
      headers: { ...invalid, origin: "https://dashboard.example.com" },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-expose-headers")?.toLowerCase()).toContain(
      "www-authenticate",
    );
  });
});
