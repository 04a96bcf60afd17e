import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphiqlOptions } from "../../src/graphql/execution/graphiql.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 17: GraphiQL works without internet. The page is fetched as a browser fetches it, over real
// HTTP, and everything it loads must come from this server.
describe("GraphiQL at /graphql, offline", { timeout: 60_000 }, () => {
  let server: TestServer;
  let page: string;
  beforeAll(async () => {
    server = await startTestServer("embedded");
    const response = await fetch(`${server.url}/graphql`, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    page = await response.text();
  });
  afterAll(() => server.close());

  /** Every URL the page loads: scripts, stylesheets, icons, and the editor's workers. */
  const loadedUrls = () => [
    ...[...page.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((match) => match[1] as string),
    ...[...page.matchAll(/<link[^>]*\shref="([^"]+)"/g)].map((match) => match[1] as string),
    ...[...page.matchAll(/"(\/graphql\/assets\/[^"]+\.worker\.js)"/g)].map((match) => match[1] as string),
  ];

  it("is titled fleetgate, shows an example query and where the Authorization header goes", () => {
    expect(page).toMatch(/<title>fleetgate GraphiQL<\/title>/);
    expect(page).toContain("applications(first: 10");
    expect(page).toContain('{\\"Authorization\\": \\"Bearer <token>\\"}'.replaceAll("<", "\\u003c"));
  });

  it("runs its example query as it opens, without a credential (a guest's public rows)", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: graphiqlOptions.defaultQuery }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data?: unknown; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ applications: expect.any(Array) });
  });

  it("loads every script and stylesheet from this server, and each answers 200", async () => {
    const urls = loadedUrls();
    // the stylesheet, the GraphiQL build, the icon and three editor workers
    expect(urls.length).toBeGreaterThanOrEqual(6);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const url of urls) {
      const absolute = new URL(url, `${server.url}/graphql`);
      expect(absolute.origin, url).toBe(server.url);
      const response = await fetch(absolute);
      expect(response.status, url).toBe(200);
      const type = response.headers.get("content-type") ?? "";
      if (url.endsWith(".js")) expect(type, url).toMatch(/^text\/javascript/);
      if (url.endsWith(".css")) expect(type, url).toMatch(/^text\/css/);
      expect((await response.arrayBuffer()).byteLength, url).toBeGreaterThan(100);
    }
  });

  it("the build it loads is GraphiQL's, and defines what the page calls", async () => {
    const script = await (await fetch(`${server.url}/graphql/assets/graphiql.js`)).text();
    expect(script).toContain("renderYogaGraphiQL");
    expect(page).toContain("YogaGraphiQL.renderYogaGraphiQL(");
  });

  it("answers 404 for an asset it does not have", async () => {
    expect((await fetch(`${server.url}/graphql/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/graphql/assets/constructor`)).status).toBe(404);
  });
});
