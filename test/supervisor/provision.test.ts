import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CloudClient } from "../../src/supervisor/cloud/cloud-client.ts";
import { provision } from "../../src/supervisor/cloud/provision.ts";

// A device's first registration retries while the cloud fails (5xx, 429, unreachable), waiting
// twice as long each time, and gives up at once when the cloud refuses it (4xx).

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

/** A cloud whose /device/register answers the given statuses in turn, then registers. */
async function cloud(statuses: number[]): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  server = createServer((request, response) => {
    request.resume();
    const status = statuses[calls++];
    response.writeHead(status ?? 201, { "content-type": "application/json" });
    response.end(JSON.stringify(status ? "no" : { id: 7, uuid: "abc", api_key: "device-key" }));
  });
  await new Promise<void>((done) => server?.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

function register(url: string, log: string[], signal = new AbortController().signal) {
  return provision(new CloudClient(url), "abc", undefined, {
    api: url,
    fleet: 1,
    provisioningKey: "provisioning-key",
    signal,
    log: (message) => log.push(message),
  });
}

describe("provision", () => {
  it("retries a failing cloud with a doubling wait until it registers", async () => {
    const { url, calls } = await cloud([503, 429]);
    const log: string[] = [];
    const credentials = await register(url, log);
    expect(credentials).toEqual({ api: url, fleet: 1, deviceId: 7, deviceKey: "device-key" });
    expect(calls()).toBe(3);
    expect(log.map((line) => /retrying in (\d+) ms/.exec(line)?.[1])).toEqual(["500", "1000"]);
  });

  it("gives up at once when the cloud refuses the key", async () => {
    const { url, calls } = await cloud([401]);
    const log: string[] = [];
    await expect(register(url, log)).rejects.toThrow(/401/);
    expect(calls()).toBe(1);
    expect(log).toEqual([]);
  });

  it("stops retrying when the supervisor stops", async () => {
    const { url, calls } = await cloud([503, 503, 503, 503]);
    const stop = new AbortController();
    const log: string[] = [];
    const registering = register(url, log, stop.signal);
    await expect.poll(() => calls()).toBe(1);
    stop.abort(new Error("stopped"));
    await expect(registering).rejects.toThrow("stopped");
    expect(calls()).toBe(1);
  });
});
