import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { useDemoServer } from "../support/demo-server.ts";

// The pinejs wire format, what a client gets without asking for OData v4 JSON
// (./format-v4-json.test.ts). Expected rows come from Prisma.

describe.each(databaseKinds)("response formats on %s", (kind) => {
  const { get, prisma } = useDemoServer(kind);

  describe("pinejs wire format", () => {
    const pinejsCases: { name: string; query: string; headers: Record<string, string> }[] = [
      { name: "no negotiation", query: "", headers: {} },
      { name: "$format=json", query: "&$format=json", headers: {} },
      { name: "$format=application/json", query: "&$format=application/json", headers: {} },
      { name: "Accept: application/json", query: "", headers: { accept: "application/json" } },
      { name: "Accept: */* (balena-sdk)", query: "", headers: { accept: "*/*" } },
    ];
    it.each(pinejsCases)("$name gives {d:[…]} with {__id} links", async ({ query, headers }) => {
      const response = await get(
        `/v6/device?$select=id,belongs_to__application,should_be_running__release&$orderby=id asc&$top=12${query}`,
        headers,
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(response.headers["content-type"]).not.toMatch(/odata\.metadata/);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" }, take: 12 })).map((row) => ({
        id: row.id,
        belongs_to__application: { __id: row.belongs_to__application },
        should_be_running__release:
          row.should_be_running__release === null ? null : { __id: row.should_be_running__release },
      }));
      expect(JSON.parse(response.body)).toStrictEqual({ d: expected });
    });

    it("an expanded to-one link is an array, [] for a null link", async () => {
      const response = await get(
        "/v6/device?$select=id&$orderby=id asc&$expand=should_be_running__release($select=id),belongs_to__application($select=id)",
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().device.findMany({ include: { PinnedRelease: true }, orderBy: { id: "asc" } })
      ).map((row) => ({
        id: row.id,
        should_be_running__release: row.PinnedRelease ? [{ id: row.PinnedRelease.id }] : [],
        belongs_to__application: [{ id: row.belongs_to__application }],
      }));
      expect(JSON.parse(response.body)).toStrictEqual({ d: expected });
    });

    it("/device/$count is {d:N}", async () => {
      const response = await get("/v6/device/$count?$filter=is_online eq true");
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(response.body)).toStrictEqual({
        d: await prisma().device.count({ where: { is_online: true } }),
      });
    });

    it("a key that matches nothing is {d:[]}", async () => {
      const response = await get("/v6/device(987654)");
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toStrictEqual({ d: [] });
    });

    it.each([
      { url: "/v6/device?$select=no_such_field", status: 400 },
      { url: "/v6/device?$filter=id eq", status: 400 },
      { url: "/v6/no_such_resource", status: 404 },
      { url: "/v6/device?$format=json&$select=no_such_field", status: 400 },
    ])("error $url → $status, the message as a JSON string", async ({ url, status }) => {
      const response = await get(url);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      const body = JSON.parse(response.body);
      expect(typeof body).toBe("string");
      expect(body).not.toBe("");
    });

    it("$format=xml → 400 (a JSON string)", async () => {
      const response = await get("/v6/device?$format=xml");
      expect(response.statusCode, response.body).toBe(400);
      expect(typeof JSON.parse(response.body)).toBe("string");
    });

    it("$format=atom → 400", async () => {
      const response = await get("/v6/device?$format=atom");
      expect(response.statusCode, response.body).toBe(400);
    });
  });
});
