import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 21: what a load balancer relies on: body limits per route, time-outs, the shutdown settings.

describe("request body limits per route", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("embedded");
  });
  afterAll(() => server?.close());

  const post = (url: string, body: object) =>
    server.app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
  const KiB = 1024;

  it("refuses a body over its route's limit with 413, and takes one under it", async () => {
    const cases: [string, number, number][] = [
      // route, a size under its limit, a size over it
      ["/login_", 15 * KiB, 17 * KiB],
      ["/api-key/user/full", 15 * KiB, 17 * KiB],
      ["/device/register", 15 * KiB, 17 * KiB],
      ["/supervisor/v1/blink", 63 * KiB, 65 * KiB],
      ["/v6/application", 511 * KiB, 513 * KiB],
      ["/graphql", 99 * KiB, 101 * KiB],
    ];
    for (const [url, under, over] of cases) {
      const padding = (size: number) => ({ note: "x".repeat(size - 20) });
      const small = await post(url, padding(under));
      expect(small.statusCode, `${url} ${under}`).not.toBe(413);
      const large = await post(url, padding(over));
      expect(large.statusCode, `${url} ${over}`).toBe(413);
    }
  });
});

describe("the operations settings", () => {
  it("have defaults above a balancer's 60 s idle time-out, and no shutdown delay", () => {
    const config = loadConfig({});
    expect(config.METRICS_TOKEN).toBeUndefined();
    expect(config.HTTP_KEEP_ALIVE_TIMEOUT_MS).toBe(72_000);
    expect(config.HTTP_HEADERS_TIMEOUT_MS).toBe(75_000);
    expect(config.SHUTDOWN_DELAY).toBe(0);
    expect(config.SHUTDOWN_GRACE).toBe(30);
  });

  it("refuse values out of range, naming the variable", () => {
    const refused: Record<string, string>[] = [
      { METRICS_TOKEN: "too-short" },
      { HTTP_KEEP_ALIVE_TIMEOUT_MS: "0" },
      { HTTP_HEADERS_TIMEOUT_MS: "2147483648" },
      { SHUTDOWN_DELAY: "-1" },
      { SHUTDOWN_DELAY: "3601" },
      { SHUTDOWN_GRACE: "0" },
      { SHUTDOWN_GRACE: "1.5" },
    ];
    for (const env of refused) {
      const [name = ""] = Object.keys(env);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(name);
    }
  });

  it("are in the README's configuration table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    for (const name of [
      "METRICS_TOKEN",
      "HTTP_KEEP_ALIVE_TIMEOUT_MS",
      "HTTP_HEADERS_TIMEOUT_MS",
      "SHUTDOWN_DELAY",
      "SHUTDOWN_GRACE",
    ]) {
      expect(readme, name).toMatch(new RegExp(`^\\| \`${name}\` \\|`, "m"));
    }
  });
});
