import { readFileSync } from "node:fs";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleDir } from "../../src/console/files.ts";
import { contentSecurityPolicy, wantsHtml } from "../../src/console/routes.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 48: the console's files, as the server sends them. The page is never cached (it names the
// current assets), the assets are cached for a year under names that change with their content,
// every answer carries a CSP without inline script, and the first load stays under 300 KiB of
// compressed JavaScript. `/` sends browsers to the console and leaves API clients their answer.

const KIB = 1024;
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

describe.each(databaseKinds)("the console's files on %s", (kind) => {
  let server: TestServer;
  const get = (url: string, headers: Record<string, string> = {}) =>
    server.app.inject({ method: "GET", url, headers: { authorization: "", ...headers } });

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  it("serves the page uncached, with a CSP that allows scripts and styles of this server only", async () => {
    const page = await get("/console/", { accept: browserAccept, host: "console.example:3000" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    const csp = String(page.headers["content-security-policy"]);
    const directives = Object.fromEntries(
      csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)]),
    );
    expect(directives["default-src"]).toEqual(["'none'"]);
    expect(directives["script-src"]).toEqual(["'self'"]);
    expect(directives["style-src"]).toEqual(["'self'"]);
    expect(directives["connect-src"]).toEqual([
      "'self'",
      "ws://console.example:3000",
      "wss://console.example:3000",
    ]);
    expect(directives["frame-ancestors"]).toEqual(["'none'"]);
    // No inline script or style in the page itself: only the two hashed files.
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son\w+=/i);
    expect((await get("/console")).statusCode).toBe(200);
  });

  it("caches the hashed assets for a year, brotli or gzip as the browser accepts", async () => {
    const page = await get("/console/");
    const names = [...page.body.matchAll(/\/console\/assets\/([\w.-]+)/g)].map((m) => m[1] as string);
    expect(names).toHaveLength(2);
    let firstLoad = 0;
    for (const name of names) {
      const plain = await get(`/console/assets/${name}`, { "accept-encoding": "identity" });
      expect(plain.statusCode).toBe(200);
      expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(plain.headers["content-encoding"]).toBeUndefined();
      const gzip = await get(`/console/assets/${name}`, { "accept-encoding": "gzip" });
      expect(gzip.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(gzip.rawPayload)).toEqual(plain.rawPayload);
      const br = await get(`/console/assets/${name}`, { "accept-encoding": "gzip, deflate, br" });
      expect(br.headers["content-encoding"]).toBe("br");
      expect(brotliDecompressSync(br.rawPayload)).toEqual(plain.rawPayload);
      expect(br.headers.vary).toMatch(/Accept-Encoding/i);
      if (name.endsWith(".js")) firstLoad += gzip.rawPayload.length;
    }
    // Issue 48: at most 300 KiB of compressed JavaScript on first load (gzip, the larger form).
    expect(firstLoad).toBeGreaterThan(10 * KIB);
    expect(firstLoad).toBeLessThanOrEqual(300 * KIB);
    const build = JSON.parse(readFileSync(`${consoleDir}/build.json`, "utf8")) as {
      firstLoadGzipBytes: number;
    };
    expect(build.firstLoadGzipBytes).toBe(firstLoad);
    expect((await get("/console/assets/missing-ABC.js")).statusCode).toBe(404);
  });

  it("sends a browser from / to the console, and answers API clients as before", async () => {
    const browser = await get("/", { accept: browserAccept });
    expect(browser.statusCode).toBe(302);
    expect(browser.headers.location).toBe("/console/");
    for (const accept of ["application/json", "*/*", "application/json, text/html;q=0.5", ""]) {
      const api = await get("/", accept ? { accept } : {});
      expect(api.statusCode).toBe(404);
      expect(api.json()).toBe("No route GET /");
    }
  });
});

describe("which requests are a browser's page and what the CSP allows", () => {
  it("reads Accept as a browser's only when it names HTML and no JSON", () => {
    expect(wantsHtml(browserAccept)).toBe(true);
    expect(wantsHtml("text/html")).toBe(true);
    for (const accept of [
      undefined,
      "",
      "*/*",
      "application/json",
      "text/html, application/json",
      "application/graphql-response+json, text/html",
    ])
      expect(wantsHtml(accept)).toBe(false);
  });

  it("never puts a Host header that is not a host and port into the policy", () => {
    for (const host of ["a.example; script-src *", "x y", "evil.example/path", "'unsafe-inline'"])
      expect(contentSecurityPolicy(host)).toMatch(/connect-src 'self'; /);
    expect(contentSecurityPolicy("[::1]:3000")).toContain(
      "connect-src 'self' ws://[::1]:3000 wss://[::1]:3000;",
    );
  });
});
