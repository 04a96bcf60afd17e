import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 31: the liveness probe under the names other stacks' probes use, and a /metrics whose very
// first scrape (in a process that never scraped before: vitest gives each file its own modules)
// follows the text format, where a NaN is spelled `NaN`.

// A sample's value in the Prometheus text format: a Go float, or NaN and the infinities as spelled.
const sampleValue = /^(NaN|[+-]Inf|[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)$/;

function badSamples(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .filter((line) => !sampleValue.test(line.slice(line.lastIndexOf(" ") + 1)));
}

describe.each(databaseKinds)("probes and the first scrape on %s", (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  it("the first scrapes write every sample in the text format (NaN, not Nan)", async () => {
    // Back to back: the second finds no event-loop delay sampled since the first.
    for (const scrape of [1, 2]) {
      const response = await fetch(`${server.url}/metrics`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(badSamples(text), `scrape ${scrape}`).toEqual([]);
      expect(text).toMatch(/^nodejs_eventloop_lag_mean_seconds \S+$/m);
    }
  });

  it.each(["/ping", "/livez", "/healthz"])(
    "%s is the liveness probe: 200 OK, no credential looked up",
    async (path) => {
      const anyone: Record<string, string> = {};
      for (const headers of [anyone, { authorization: "Bearer not-a-credential" }]) {
        const response = await fetch(`${server.url}${path}`, { headers });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
        expect(await response.text()).toBe("OK");
        expect(response.headers.get("x-sql-statements")).toBe("0");
      }
    },
  );
});
