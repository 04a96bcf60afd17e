import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configDocumentSchema } from "../../src/catalogue/document.ts";
import { importCatalogue } from "../../src/catalogue/import.ts";
import { catalogueApp, privateEntry, userKey } from "../support/catalogue/catalogue-fixture.ts";
import { sampleCatalogue } from "../support/catalogue/sample-catalogue.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const publicSlugs = sampleCatalogue.map((entry) => entry.slug);

describe.each(databaseKinds)("/config and /device-types/v1 on %s", (kind) => {
  let test: TestDatabase;
  let app: FastifyInstance;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    test = await freshDatabase(kind);
    await importCatalogue(test.db, [...sampleCatalogue, privateEntry]);
    admin = await userKey(test.db, "catalogue-admin", true);
    user = await userKey(test.db, "catalogue-user", false);
    app = await catalogueApp(test.db, {
      SUPPORTED_SOCIAL_PROVIDERS: "google, github",
      DEBUG_ENABLED: "true",
      GA_ID: "G-123",
      DEVICE_URLS_BASE: "devices.example.com",
    });
  });
  afterAll(async () => {
    await app.close();
    await test.drop();
  });

  const get = (url: string, key?: string) =>
    app.inject({ method: "GET", url, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const slugsOf = (body: string) => (JSON.parse(body) as { slug: string }[]).map((entry) => entry.slug);

  it("GET /config answers without a credential, with values from configuration and the public catalogue", async () => {
    const response = await get("/config");
    expect(response.statusCode).toBe(200);
    const document = configDocumentSchema.parse(response.json());
    expect(document).toMatchObject({
      supportedSocialProviders: ["google", "github"],
      debugEnabled: true,
      deviceUrlsBase: "devices.example.com",
      gitServerUrl: "git.localhost",
      ga: { id: "G-123", site: "localhost" },
      recurlyPublicKey: "<PUBLIC_KEY>",
      pubnub: { subscribe_key: "<SUBSCRIBE_KEY>", publish_key: "<PUBLISH_KEY>" },
    });
    expect(document.deviceTypes.map((entry) => entry.slug)).toEqual(publicSlugs);
    expect(document.deviceTypes).toEqual(sampleCatalogue);
  });

  it("GET /device-types/v1 is a bare array of what the caller may read: private types for admins only", async () => {
    expect(slugsOf((await get("/device-types/v1")).body)).toEqual(publicSlugs);
    expect(slugsOf((await get("/device-types/v1", user)).body)).toEqual(publicSlugs);
    expect(slugsOf((await get("/device-types/v1", admin)).body)).toEqual([...publicSlugs, "secret-board"]);
    const forAdmin = configDocumentSchema.parse((await get("/config", admin)).json());
    expect(forAdmin.deviceTypes.map((entry) => entry.slug)).toContain("secret-board");
  });

  it("GET /device-types/v1/:slug finds one entry by slug or alias", async () => {
    const bySlug = await get("/device-types/v1/raspberrypi3");
    expect(bySlug.statusCode).toBe(200);
    expect(bySlug.json()).toEqual(sampleCatalogue.find((entry) => entry.slug === "raspberrypi3"));
    expect((await get("/device-types/v1/raspberry-pi3")).json()).toEqual(bySlug.json());
    expect((await get("/device-types/v1/secret-board", admin)).json()).toEqual(privateEntry);
  });

  it("a malformed slug is 400 'Invalid device type'; an unknown (or unreadable) one is 404", async () => {
    for (const malformed of ["Raspberry%20Pi", "UPPER", "-dash", "a%27b"]) {
      const response = await get(`/device-types/v1/${malformed}`);
      expect([response.statusCode, response.json()]).toEqual([400, "Invalid device type"]);
    }
    const unknown = await get("/device-types/v1/nope");
    expect([unknown.statusCode, unknown.json()]).toEqual([404, "Unknown device type nope"]);
    const hidden = await get("/device-types/v1/secret-board", user);
    expect([hidden.statusCode, hidden.json()]).toEqual([404, "Unknown device type secret-board"]);
  });
});

describe.each(databaseKinds)("the documents and /v6/device_type agree on %s", (kind) => {
  let server: TestServer;
  let app: FastifyInstance;
  beforeAll(async () => {
    server = await startTestServer(kind);
    app = await catalogueApp(server.test.db);
  });
  afterAll(async () => {
    await app.close();
    await server.close();
  });

  it("after an import, every row and entry agree on slug, name, arch, state and private", async () => {
    await importCatalogue(server.test.db, { deviceTypes: [...sampleCatalogue, privateEntry] });
    const odata = await server.app.inject({
      method: "GET",
      url: "/v6/device_type?$select=slug,name,arch,state,is_private&$orderby=slug asc",
    });
    expect(odata.statusCode).toBe(200);
    const rows = (odata.json() as { d: Record<string, unknown>[] }).d;
    const documents = await app.inject({
      method: "GET",
      url: "/device-types/v1",
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    const entries = (documents.json() as Record<string, unknown>[])
      .map((entry) => ({
        slug: entry.slug,
        name: entry.name,
        arch: entry.arch,
        state: entry.state,
        is_private: entry.private,
      }))
      .sort((a, b) => String(a.slug).localeCompare(String(b.slug)));
    expect(rows).toHaveLength(sampleCatalogue.length + 1);
    expect(entries).toEqual(rows);
  });
});
