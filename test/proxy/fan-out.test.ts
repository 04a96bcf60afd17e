import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fanOut } from "../../src/proxy/fan-out.ts";

// The proxy calls at most `concurrency` devices at once, and answers in the targets' order
// whatever order the devices answer in.

describe("fanOut", () => {
  let server: Server;
  let port = 0;
  let inFlight = 0;
  let most = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      inFlight++;
      most = Math.max(most, inFlight);
      const index = Number(new URL(request.url ?? "/", "http://x").pathname.slice(1));
      // Later targets answer sooner, so the answers arrive out of order.
      setTimeout(
        () => {
          inFlight--;
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ index }));
        },
        60 - index * 5,
      );
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it("holds the concurrency and keeps the targets' order", async () => {
    const targets = Array.from({ length: 10 }, (_, index) => ({
      address: "127.0.0.1",
      port,
      apiKey: "key",
      path: `/${index}`,
      data: undefined,
    }));
    const outcomes = await fanOut(targets, { method: "GET", timeoutMs: 5_000, concurrency: 3 });
    expect(outcomes.map((outcome) => outcome.body)).toEqual(targets.map((_, index) => ({ index })));
    expect(most).toBe(3);
    expect(await fanOut([], { method: "GET", timeoutMs: 5_000, concurrency: 3 })).toEqual([]);
  });
});
