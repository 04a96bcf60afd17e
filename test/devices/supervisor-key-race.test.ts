import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 30, item 5 of its follow-up: POST /v1/regenerate-api-key through the proxy gives a device's
// supervisor a new key, and the old one stops working at once. A state report the device sent
// before, with the old key, may be recorded after: it must not bring the dead key back, or the
// cloud could no longer reach the device. One loopback server stands in for the device's
// supervisor and honours only its current key, as the real one does.

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const newKey = () => randomBytes(16).toString("hex");

describe.each(databaseKinds)("a regenerated supervisor key on %s", (kind) => {
  let server: TestServer;
  let supervisor: Server;
  let port: number;
  /** The stand-in supervisor's key: the only one it answers. */
  let current = newKey();
  let uuid: string;
  let deviceKey: string;

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    supervisor = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://x");
      if (url.searchParams.get("apikey") !== current) {
        response.writeHead(401).end("Unauthorized");
        return;
      }
      if (request.method === "POST" && url.pathname === "/v1/regenerate-api-key") {
        current = newKey();
        response.writeHead(200, { "content-type": "text/plain" }).end(current);
        return;
      }
      response.writeHead(200, { "content-type": "text/plain" }).end("OK");
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    port = (supervisor.address() as { port: number }).port;
    const provisioning = JSON.parse(
      (await server.app.inject({ method: "POST", url: "/api-key/application/1/provisioning" })).body,
    ) as string;
    uuid = newKey();
    const registered = await server.app.inject({
      method: "POST",
      url: "/device/register",
      headers: bearer(provisioning),
      payload: { application: 1, uuid },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    deviceKey = (JSON.parse(registered.body) as { api_key: string }).api_key;
  });
  afterAll(async () => {
    await new Promise((resolve) => supervisor?.close(resolve));
    await server?.close();
  });

  /** A state report as the device sends it, carrying `apiKey` as its supervisor key. */
  const report = async (apiKey: string) => {
    const reply = await server.app.inject({
      method: "PATCH",
      url: `/device/v2/${uuid}/state`,
      headers: bearer(deviceKey),
      payload: {
        supervisor_address: "127.0.0.1",
        api_port: port,
        api_key: apiKey,
        supervisor_version: "17.0.0",
      },
    });
    expect(reply.statusCode, reply.body).toBe(200);
  };
  const command = (path: string) =>
    server.app.inject({ method: "POST", url: `/supervisor${path}`, payload: { uuid } });

  it("the cloud stores the new key from the answer, and a report older than the regeneration does not restore the old one", async () => {
    await report(current);
    expect((await command("/v1/blink")).statusCode).toBe(200);
    const before = current;
    const regenerated = await command("/v1/regenerate-api-key");
    expect(regenerated.statusCode, regenerated.body).toBe(200);
    expect(regenerated.body).toBe(current);
    expect(current).not.toBe(before);
    // The next command reaches the device with its new key, before any report.
    expect((await command("/v1/blink")).statusCode).toBe(200);
    // The report the device sent before the regeneration, recorded only now.
    await report(before);
    const blink = await command("/v1/blink");
    expect([blink.statusCode, blink.body]).toEqual([200, "OK"]);
  });

  it("a key the device chose itself still comes with its report", async () => {
    // The device regenerated its key on its own (its application called its supervisor): the cloud
    // learns it from the report, as before.
    current = newKey();
    expect((await command("/v1/blink")).statusCode).toBe(401);
    await report(current);
    expect((await command("/v1/blink")).statusCode).toBe(200);
    // Twice through the proxy: both replaced keys stay retired.
    const first = current;
    expect((await command("/v1/regenerate-api-key")).statusCode).toBe(200);
    const second = current;
    expect((await command("/v1/regenerate-api-key")).statusCode).toBe(200);
    await report(first);
    await report(second);
    expect((await command("/v1/blink")).statusCode).toBe(200);
  });
});
