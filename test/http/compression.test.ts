import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { rawRequest } from "../support/http/raw-request.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 31: answers are compressed (br or gzip, as the client asks) from HTTP_COMPRESSION_MIN_BYTES
// on; small ones are not; HTTP_COMPRESSION=false turns it off; a subscription's SSE stream is never
// compressed, so each event reaches the client as it is written.

const devices = "/v6/device?$orderby=id";

describe.each(databaseKinds)("response compression on %s", (kind) => {
  let server: TestServer;
  let plain: TestServer;
  let auth: Record<string, string>;
  let identity: Buffer;

  beforeAll(async () => {
    server = await startTestServer(kind);
    plain = await startTestServer(kind, { HTTP_COMPRESSION: "false" });
    await seedDemo(server.test.db);
    await seedDemo(plain.test.db);
    auth = { authorization: `Bearer ${server.adminKey}` };
    const answer = await rawRequest(`${server.url}${devices}`, { headers: auth });
    expect(answer.headers["content-encoding"]).toBeUndefined();
    identity = answer.body;
    // The demo's device list is well above the threshold.
    expect(identity.length).toBeGreaterThan(10_000);
  });
  afterAll(async () => {
    await server.close();
    await plain.close();
  });

  it.each([
    ["gzip", gunzipSync],
    ["br", brotliDecompressSync],
  ] as const)("a large answer in %s, read back byte for byte", async (encoding, decompress) => {
    const answer = await rawRequest(`${server.url}${devices}`, {
      headers: { ...auth, "accept-encoding": encoding },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-encoding"]).toBe(encoding);
    expect(String(answer.headers.vary).toLowerCase()).toContain("accept-encoding");
    expect(answer.headers["x-sql-statements"]).toBe("1");
    expect(answer.body.length).toBeLessThan(identity.length / 4);
    expect(decompress(answer.body).equals(identity)).toBe(true);
  });

  it("takes what the client prefers among both, by its q-values", async () => {
    const gzip = await rawRequest(`${server.url}${devices}`, {
      headers: { ...auth, "accept-encoding": "br;q=0.5, gzip;q=1" },
    });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    const either = await rawRequest(`${server.url}${devices}`, {
      headers: { ...auth, "accept-encoding": "gzip, deflate, br" },
    });
    expect(["br", "gzip"]).toContain(either.headers["content-encoding"]);
  });

  it("leaves small answers, and clients that ask for none, uncompressed", async () => {
    for (const [path, headers] of [
      ["/ping", { "accept-encoding": "gzip, br" }],
      ["/v6/device(1)?$select=id", { ...auth, "accept-encoding": "gzip, br" }],
      [devices, { ...auth, "accept-encoding": "identity" }],
      [devices, auth],
    ] as const) {
      const answer = await rawRequest(`${server.url}${path}`, { headers });
      expect(answer.status, path).toBe(200);
      expect(answer.headers["content-encoding"], path).toBeUndefined();
    }
  });

  it("HTTP_COMPRESSION=false compresses nothing", async () => {
    const answer = await rawRequest(`${plain.url}${devices}`, {
      headers: { authorization: `Bearer ${plain.adminKey}`, "accept-encoding": "gzip, br" },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-encoding"]).toBeUndefined();
    expect(answer.body.length).toBeGreaterThan(10_000);
  });

  it("never compresses a subscription's SSE stream: each event arrives as it is written", async () => {
    const [fleet] = await server.test.db.query<{ id: number }>({
      text: `SELECT "id" FROM "application" ORDER BY "id" LIMIT 1`,
      values: [],
    });
    const stream = await new Promise<{
      headers: Record<string, unknown>;
      next: Promise<string>;
      close(): void;
    }>((resolve, reject) => {
      const sent = request(
        `${server.url}/graphql`,
        {
          method: "POST",
          headers: {
            ...auth,
            accept: "text/event-stream",
            "accept-encoding": "gzip, br",
            "content-type": "application/json",
          },
        },
        (response) => {
          let text = "";
          const next = new Promise<string>((found) => {
            response.on("data", (chunk: Buffer) => {
              text += chunk.toString("latin1");
              if (text.includes("event: next")) found(text);
            });
          });
          resolve({ headers: response.headers, next, close: () => sent.destroy() });
        },
      );
      sent.on("error", reject);
      sent.end(
        JSON.stringify({
          query: `subscription { fleetChanged(where: { id: { eq: ${fleet?.id} } }) { id appName } }`,
        }),
      );
    });
    try {
      expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
      // graphql-yoga marks the stream `Content-Encoding: none` (for proxies): never gzip or br.
      expect([undefined, "none"]).toContain(stream.headers["content-encoding"]);
      // The stream has its baseline; a rename is an event.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const renamed = await fetch(`${server.url}/v6/application(${fleet?.id})`, {
        method: "PATCH",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ app_name: "renamed-while-streaming" }),
      });
      expect(renamed.status).toBe(200);
      const text = await Promise.race([
        stream.next,
        new Promise<string>((_, reject) =>
          setTimeout(() => reject(new Error("no event within 15 s")), 15_000),
        ),
      ]);
      expect(text).toContain("renamed-while-streaming");
    } finally {
      stream.close();
    }
  });
});
