import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { useDemoServer } from "../support/demo-server.ts";

// The service document at each version's root: the entity sets a client may read there.

describe.each(databaseKinds)("response formats on %s", (kind) => {
  const { get } = useDemoServer(kind);

  describe("the service document at each version's root", () => {
    it.each(["/v6/", "/v6", "/v7/", "/v1/"])(
      "GET %s lists that version's entity sets, as OData v4 JSON",
      async (url) => {
        const version = url.split("/")[1] as string;
        const response = await get(url);
        expect(response.statusCode, response.body).toBe(200);
        expect(response.headers["content-type"]).toMatch(/^application\/json/);
        expect(response.headers["odata-version"]).toBe("4.0");
        const document = JSON.parse(response.body) as {
          "@odata.context": string;
          value: Record<string, string>[];
        };
        expect(document["@odata.context"]).toBe(`/${version}/$metadata`);
        const sets = new Map(document.value.map((set) => [set.name, set]));
        expect(sets.get(version === "v1" ? "device" : "application")).toEqual({
          name: version === "v1" ? "device" : "application",
          kind: "EntitySet",
          url: version === "v1" ? "device" : "application",
        });
        // Each version's own names: v7 has no my_application, v1 no release (it says build).
        expect(sets.has("my_application")).toBe(version === "v6");
        expect(sets.has("release")).toBe(version !== "v1");
        // Every set listed is readable at its URL.
        for (const set of document.value.slice(0, 3)) {
          expect((await get(`/${version}/${set.url}?$top=1`)).statusCode, set.url).toBe(200);
        }
      },
    );

    it("refuses an invalid credential, as every route does", async () => {
      const response = await get("/v6/", { authorization: "Bearer not-a-key" });
      expect(response.statusCode).toBe(401);
    });
  });
});
