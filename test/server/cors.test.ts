import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("CORS, for browser front-ends", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("embedded");
  });
  afterAll(() => server.close());

  it("answers a preflight with the headers clients send and the methods they use", async () => {
    const response = await server.app.inject({
      method: "OPTIONS",
      url: "/v6/device",
      headers: {
        origin: "https://dashboard.example.com",
        "access-control-request-method": "PATCH",
        "access-control-request-headers": "authorization,content-type,x-balena-client",
      },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers["access-control-allow-origin"]).toBe("https://dashboard.example.com");
    expect(String(response.headers["access-control-allow-headers"]).toLowerCase()).toContain("authorization");
    expect(String(response.headers["access-control-allow-headers"]).toLowerCase()).toContain(
      "x-balena-client",
    );
    expect(String(response.headers["access-control-allow-methods"])).toContain("PATCH");
  });

  it("exposes Retry-After and the row and statement counts to scripts", async () => {
    const response = await server.app.inject({
      method: "GET",
      url: "/v6/device",
      headers: { origin: "https://dashboard.example.com" },
    });
    expect(response.headers["access-control-allow-origin"]).toBe("https://dashboard.example.com");
    expect(String(response.headers["access-control-expose-headers"])).toContain("Retry-After");
    expect(String(response.headers["access-control-expose-headers"])).toContain("x-affected-rows");
  });
});
