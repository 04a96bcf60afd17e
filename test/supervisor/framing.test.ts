import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { KEY, unmanagedDevice } from "../support/supervisor/supervisor-process.ts";

// HTTP framing as express gives it to the real supervisor: the auth middleware's scheme match
// ignores case; HEAD is routed to GET; the default router ignores case in paths and allows a
// trailing slash; the key is checked before the body is parsed; routes without a body parser
// ignore a malformed body; body-parser's strict mode refuses a non-object JSON body.

describe("fleetgate supervisor --unmanaged: HTTP framing", () => {
  const { device, call } = unmanagedDevice();

  it("matches the Bearer and ApiKey schemes case-insensitively", async () => {
    for (const scheme of ["bearer", "BEARER", "apikey", "APIKEY", "ApiKey"]) {
      const answer = await call("GET", "/v1/device", {
        key: null,
        headers: { authorization: `${scheme} ${KEY}` },
      });
      expect(answer.status, scheme).toBe(200);
    }
    expect(
      (await call("GET", "/v1/device", { key: null, headers: { authorization: `Basic ${KEY}` } })).status,
    ).toBe(401);
  });

  it("answers HEAD wherever GET answers, without a body", async () => {
    for (const path of ["/ping", "/v1/device", "/v1/apps/1", "/v2/version"]) {
      const answer = await call("HEAD", path);
      expect([answer.status, answer.text], path).toEqual([200, ""]);
    }
    expect((await call("HEAD", "/v1/device", { key: null })).status).toBe(401);
  });

  it("matches paths case-insensitively and with a trailing slash", async () => {
    for (const path of ["/V1/DEVICE", "/v1/device/", "/v1/Apps/1/", "/PING"]) {
      expect((await call("GET", path)).status, path).toBe(200);
    }
  });

  it("checks the key before parsing the body: a malformed body without a key is a 401", async () => {
    const answer = await call("POST", "/v1/update", { key: null, body: "{not json" });
    expect([answer.status, answer.text]).toEqual([401, "Unauthorized"]);
  });

  it("ignores a malformed body on routes that read none (/ping, /v1/blink)", async () => {
    // fetch sends no body with a GET: node:http does.
    const ping = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(
        `${device.url}/ping`,
        { method: "GET", headers: { "content-type": "application/json", "content-length": "9" } },
        (response) => {
          let text = "";
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on("error", reject);
      request.end("{not json");
    });
    expect(ping).toEqual({ status: 200, text: "OK" });
    const blink = await call("POST", "/v1/blink", { body: "{not json" });
    expect([blink.status, blink.text]).toEqual([200, "OK"]);
  });

  // body-parser's createStrictSyntaxError masks the text and parses it, so the message is
  // JSON.parse's own about the body's first character.
  it("refuses a non-object JSON body with body-parser's strict-mode message (503 JSON)", async () => {
    const cases: [string, string][] = [
      ["5", `Unexpected token '5', "5" is not valid JSON`],
      ['"abc"', `Unexpected token '"', ""abc"" is not valid JSON`],
      ["null", `Unexpected token 'n', "null" is not valid JSON`],
      [" true", `Unexpected token 't', " true" is not valid JSON`],
    ];
    for (const [body, message] of cases) {
      const answer = await call("POST", "/v1/update", { body });
      expect([answer.status, answer.json()], body).toEqual([503, { status: "failed", message }]);
    }
  });
});
