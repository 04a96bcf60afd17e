import { readFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { parseExposition, type Sample, sampleValue } from "../support/http/prometheus.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 21: a scrape after a few requests of every kind finds each family of the README's
// "Operations" list with the right labels, and route templates, never URLs.

const json = { "content-type": "application/json" };

/** A loopback server standing in for the supervisors: it answers by the key a device presents. */
function fakeSupervisors(): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const waiting: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey");
    if (key === "key-slow") {
      waiting.push(response); // never answers: the proxy's time-out
      return;
    }
    response.statusCode = key === "key-error" ? 500 : 200;
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ key }));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        server,
        port: (server.address() as { port: number }).port,
        close: async () => {
          server.closeAllConnections();
          await new Promise((done) => server.close(done));
        },
      }),
    ),
  );
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(databaseKinds)("GET /metrics on %s", (kind) => {
  let server: TestServer;
  let supervisors: Awaited<ReturnType<typeof fakeSupervisors>>;
  let samples: Sample[];
  let types: Map<string, string>;
  let contentType: string | undefined;
  let online: number;
  let fleetFanOut: number;

  beforeAll(async () => {
    server = await startTestServer(kind, { PROXY_TIMEOUT_MS: "500" });
    await seedDemo(server.test.db);
    supervisors = await fakeSupervisors();
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const box = new KeyBox(secret?.value ?? "");
    const nowhere = await closedPort();
    // One device per outcome of a proxy call.
    const devices = [
      { key: "key-ok", port: supervisors.port, version: "17.0.0" },
      { key: "key-error", port: supervisors.port, version: "17.0.0" },
      { key: "key-slow", port: supervisors.port, version: "17.0.0" },
      { key: "key-nowhere", port: nowhere, version: "17.0.0" },
      // /v1/blink came with supervisor 1.1.0: not called.
      { key: "key-old", port: supervisors.port, version: "1.0.0" },
    ];
    const ids = await server.test.db.query<{ id: number; belongs_to__application: number }>({
      text: `SELECT "id", "belongs_to__application" FROM "device" ORDER BY "id" LIMIT 5`,
      values: [],
    });
    for (const [index, device] of devices.entries()) {
      await server.test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = $4::text WHERE "id" = $1::int4`,
        values: [ids[index]?.id, device.port, box.seal(device.key), device.version],
      });
    }
    const fleet = ids[0]?.belongs_to__application;
    const [counts] = await server.test.db.query<{ online: number; fleet: number }>({
      text: `SELECT count(*)::int AS "online",
                    count(*) FILTER (WHERE "belongs_to__application" = $1::int4)::int AS "fleet"
             FROM "device" WHERE "is_online"`,
      values: [fleet],
    });
    online = counts?.online ?? -1;
    fleetFanOut = counts?.fleet ?? -1;

    // A few requests of every kind.
    const send = (method: "GET" | "POST", url: string, body?: object, headers: Record<string, string> = {}) =>
      server.app.inject({
        method,
        url,
        headers: body ? { ...json, ...headers } : headers,
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
    expect((await send("GET", "/ping")).statusCode).toBe(200);
    expect((await send("GET", "/v6/device?$top=2")).statusCode).toBe(200);
    // The same shape with another key: the second is a hit of the OData URL cache.
    expect((await send("GET", "/v6/device(1)?$select=id")).statusCode).toBe(200);
    expect((await send("GET", "/v6/device(2)?$select=id")).statusCode).toBe(200);
    expect((await send("GET", "/v6/application?$expand=owns__device($top=1)")).statusCode).toBe(200);
    expect((await send("GET", "/no/such/path?apikey=secret")).statusCode).toBe(404);
    expect((await send("POST", "/graphql", { query: "{ __typename }" })).statusCode).toBe(200);
    for (const id of ids) {
      await send("POST", "/supervisor/v1/blink", { deviceId: id.id });
    }
    await send("POST", "/supervisor/v1/blink", { appId: fleet });
    // Six wrong passwords for one name from one address: the pair's five free ones, then a wait,
    // and the seventh attempt is refused before its password is checked.
    const logins: number[] = [];
    for (let attempt = 0; attempt < 7; attempt++) {
      const login = await send("POST", "/login_", { username: "nobody", password: "wrong-password" });
      logins.push(login.statusCode);
    }
    expect(logins).toEqual([401, 401, 401, 401, 401, 401, 429]);

    const scrape = await send("GET", "/metrics");
    expect(scrape.statusCode, scrape.body).toBe(200);
    contentType = scrape.headers["content-type"] as string | undefined;
    ({ samples, types } = parseExposition(scrape.body));
  }, 120_000);
  afterAll(async () => {
    await supervisors?.close();
    await server?.close();
  });

  it("is Prometheus text, one TYPE per family", () => {
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(Object.fromEntries([...types].filter(([name]) => name.startsWith("fleetgate_")))).toEqual({
      fleetgate_http_requests_total: "counter",
      fleetgate_http_request_duration_seconds: "histogram",
      fleetgate_http_request_sql_statements: "histogram",
      fleetgate_devices_online: "gauge",
      fleetgate_proxy_device_calls_total: "counter",
      fleetgate_proxy_fanout_devices: "histogram",
      fleetgate_login_failures_total: "counter",
      fleetgate_login_throttled_total: "counter",
      fleetgate_statement_cache_lookups_total: "counter",
      fleetgate_statement_cache_entries: "gauge",
      fleetgate_graphql_operations_total: "counter",
      fleetgate_db_statements_total: "counter",
      ...(kind === "postgres"
        ? {
            fleetgate_db_pool_max_connections: "gauge",
            fleetgate_db_pool_connections: "gauge",
            fleetgate_db_pool_idle_connections: "gauge",
            fleetgate_db_pool_waiting_requests: "gauge",
          }
        : {}),
    });
  });

  it("counts statements by target: all the primary's without replicas (test/db/replicas.test.ts has them)", () => {
    expect(sampleValue(samples, "fleetgate_db_statements_total", { target: "primary" })).toBeGreaterThan(0);
    expect(sampleValue(samples, "fleetgate_db_statements_total", { target: "replica" })).toBe(0);
  });

  it("is documented: the README's Operations section names every family of the scrape", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const start = readme.indexOf("## Operations");
    const operations = readme.slice(start, readme.indexOf("\n## ", start + 1));
    expect(start).toBeGreaterThan(0);
    const missing = [...types.keys()].filter((family) => !operations.includes(`\`${family}\``));
    expect(missing).toEqual([]);
  });

  it("counts the statement caches' hits and misses", () => {
    const url = (result: string) =>
      sampleValue(samples, "fleetgate_statement_cache_lookups_total", { cache: "odata_url", result });
    expect(url("hit")).toBe(1);
    expect(url("miss")).toBe(3);
    expect(sampleValue(samples, "fleetgate_statement_cache_entries", { cache: "odata_url" })).toBe(3);
  });

  it("counts HTTP requests and their latency by method, route template and status", () => {
    const read = { method: "GET", route: "/v6/*", status: "200" };
    expect(sampleValue(samples, "fleetgate_http_requests_total", read)).toBe(4);
    expect(sampleValue(samples, "fleetgate_http_request_duration_seconds_count", read)).toBe(4);
    expect(
      sampleValue(samples, "fleetgate_http_request_duration_seconds_bucket", { ...read, le: "+Inf" }),
    ).toBe(4);
    expect(sampleValue(samples, "fleetgate_http_request_duration_seconds_sum", read)).toBeGreaterThan(0);
    expect(
      sampleValue(samples, "fleetgate_http_requests_total", {
        method: "POST",
        route: "/graphql",
        status: "200",
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, "fleetgate_http_requests_total", {
        method: "POST",
        route: "/login_",
        status: "429",
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, "fleetgate_http_requests_total", {
        method: "GET",
        route: "unmatched",
        status: "404",
      }),
    ).toBe(1);
  });

  it("labels routes by template only: no URL, path or query reaches a label", () => {
    const routes = new Set(samples.flatMap((sample) => sample.labels.route ?? []));
    expect([...routes].sort()).toEqual(
      ["/graphql", "/login_", "/ping", "/supervisor/*", "/v6/*", "unmatched"].sort(),
    );
  });

  it("counts SQL statements per request: every OData read ran one", () => {
    const read = { method: "GET", route: "/v6/*" };
    expect(sampleValue(samples, "fleetgate_http_request_sql_statements_count", read)).toBe(4);
    expect(sampleValue(samples, "fleetgate_http_request_sql_statements_sum", read)).toBe(4);
    expect(sampleValue(samples, "fleetgate_http_request_sql_statements_bucket", { ...read, le: "0" })).toBe(
      0,
    );
    expect(sampleValue(samples, "fleetgate_http_request_sql_statements_bucket", { ...read, le: "1" })).toBe(
      4,
    );
    expect(
      sampleValue(samples, "fleetgate_http_request_sql_statements_count", { method: "GET", route: "/ping" }),
    ).toBe(1);
  });

  it("reports the PostgreSQL pool (the embedded database has none)", () => {
    const max = sampleValue(samples, "fleetgate_db_pool_max_connections");
    if (kind === "embedded") {
      expect(samples.some((sample) => sample.name.startsWith("fleetgate_db_pool_"))).toBe(false);
      return;
    }
    // test/support/databases.ts opens its pools with 4 connections.
    expect(max).toBe(4);
    const open = sampleValue(samples, "fleetgate_db_pool_connections") ?? -1;
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(4);
    expect(sampleValue(samples, "fleetgate_db_pool_idle_connections")).toBeLessThanOrEqual(open);
    expect(sampleValue(samples, "fleetgate_db_pool_waiting_requests")).toBe(0);
  });

  it("counts proxy calls by outcome and the fan-out of each command", () => {
    const calls = (outcome: string) =>
      sampleValue(samples, "fleetgate_proxy_device_calls_total", { outcome });
    // Five commands by deviceId (one device each), then one to the whole fleet of the first device.
    const perDevice = { ok: 1, device_error: 1, timeout: 1, unreachable: 1, unsupported: 1 };
    for (const [outcome, atLeast] of Object.entries(perDevice)) {
      expect(calls(outcome), outcome).toBeGreaterThanOrEqual(atLeast);
    }
    const total = Object.keys(perDevice).reduce((sum, outcome) => sum + (calls(outcome) ?? 0), 0);
    expect(sampleValue(samples, "fleetgate_proxy_fanout_devices_count")).toBe(6);
    expect(sampleValue(samples, "fleetgate_proxy_fanout_devices_sum")).toBe(5 + fleetFanOut);
    expect(total).toBe(5 + fleetFanOut);
    expect(sampleValue(samples, "fleetgate_proxy_fanout_devices_bucket", { le: "1" })).toBe(5);
  });

  it("reports the devices online, over every fleet", () => {
    expect(online).toBeGreaterThan(5);
    expect(sampleValue(samples, "fleetgate_devices_online")).toBe(online);
  });

  it("counts failed logins and logins refused by the throttle", () => {
    expect(sampleValue(samples, "fleetgate_login_failures_total")).toBe(6);
    expect(sampleValue(samples, "fleetgate_login_throttled_total")).toBe(1);
  });

  it("includes the process metrics", () => {
    for (const family of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "process_open_fds",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_active_handles_total",
    ]) {
      expect(sampleValue(samples, family), family).toBeGreaterThanOrEqual(0);
    }
    expect(types.get("nodejs_gc_duration_seconds")).toBe("histogram");
  });
});

describe("METRICS_TOKEN", () => {
  const token = "metrics-token-0123456789";
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("embedded", { METRICS_TOKEN: token });
  });
  afterAll(() => server?.close());

  it("asks a scrape for the bearer token when it is set", async () => {
    const scrape = (authorization: string) =>
      server.app.inject({ method: "GET", url: "/metrics", headers: { authorization } });
    const none = await scrape("");
    expect(none.statusCode).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
    expect((await scrape(`Bearer ${token}x`)).statusCode).toBe(401);
    expect((await scrape(`Basic ${token}`)).statusCode).toBe(401);
    // The admin's own API key is not the metrics token.
    expect((await scrape(`Bearer ${server.adminKey}`)).statusCode).toBe(401);
    const allowed = await scrape(`Bearer ${token}`);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain("fleetgate_http_requests_total");
  });
});
