import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { useDemoServer } from "../support/demo-server.ts";

// Standard OData v4 JSON, when the client negotiates it (the pinejs wire format is the default:
// ./format-pinejs.test.ts). Expected rows come from Prisma.

const v4Minimal = "application/json;odata.metadata=minimal";

/** The three ways a client asks for OData v4 JSON (the $format one also %-encoded, as URLSearchParams sends it). */
const negotiations: { name: string; headers: Record<string, string>; query: string }[] = [
  { name: "OData-Version: 4.0", headers: { "odata-version": "4.0" }, query: "" },
  { name: `Accept: ${v4Minimal}`, headers: { accept: v4Minimal }, query: "" },
  { name: `$format=${v4Minimal}`, headers: {}, query: `&$format=${v4Minimal}` },
  {
    name: "$format=application%2Fjson%3Bodata.metadata%3Dminimal",
    headers: {},
    query: "&$format=application%2Fjson%3Bodata.metadata%3Dminimal",
  },
];

/** A media type and its parameters (a quoted-string value is the same value, RFC 9110 §5.6.6). */
function mediaType(header: unknown): { type: string; parameters: Record<string, string> } {
  const [type = "", ...parameters] = String(header).split(";");
  return {
    type: type.trim().toLowerCase(),
    parameters: Object.fromEntries(
      parameters.map((parameter) => {
        const [name = "", value = ""] = parameter.split("=");
        return [name.trim().toLowerCase(), value.trim().replace(/^"(.*)"$/, "$1")];
      }),
    ),
  };
}

function expectV4ContentType(header: unknown): void {
  const { type, parameters } = mediaType(header);
  expect(type, String(header)).toBe("application/json");
  expect(parameters["odata.metadata"], String(header)).toBe("minimal");
}

describe.each(databaseKinds)("response formats on %s", (kind) => {
  const { get, prisma } = useDemoServer(kind);

  describe("OData v4 JSON", () => {
    it.each(negotiations)("$name gives {@odata.context, value}", async ({ headers, query }) => {
      const response = await get(`/v6/device?$select=id,uuid&$orderby=id asc&$top=3${query}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      expectV4ContentType(response.headers["content-type"]);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" }, take: 3 })).map((row) => ({
        id: row.id,
        uuid: row.uuid,
      }));
      expect(JSON.parse(response.body)).toStrictEqual({
        "@odata.context": "/v6/$metadata#device",
        value: expected,
      });
      // The context is the first member, as OData v4 JSON requires.
      expect(response.body.startsWith('{"@odata.context":')).toBe(true);
      expect(response.headers["odata-version"]).toBe("4.0");
    });

    it.each(negotiations)("$name: @odata.context names the resource", async ({ headers, query }) => {
      const response = await get(`/v6/application?$select=id${query}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)["@odata.context"]).toBe("/v6/$metadata#application");
    });

    it("$count=true gives @odata.count, the number of matching rows before $top", async () => {
      const response = await get(
        "/v6/device?$count=true&$filter=is_online eq true&$select=id&$orderby=id asc&$top=2",
        {
          "odata-version": "4.0",
        },
      );
      expect(response.statusCode, response.body).toBe(200);
      const body = JSON.parse(response.body);
      expect(body["@odata.count"]).toBe(await prisma().device.count({ where: { is_online: true } }));
      expect(body.value).toStrictEqual(
        (await prisma().device.findMany({ where: { is_online: true }, orderBy: { id: "asc" }, take: 2 })).map(
          (row) => ({
            id: row.id,
          }),
        ),
      );
      expect(Object.keys(body)).toEqual(["@odata.context", "@odata.count", "value"]);
    });

    it("$count=true with $format (no header) gives @odata.count too", async () => {
      const response = await get(`/v6/application?$count=true&$select=id&$top=1&$format=${v4Minimal}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)["@odata.count"]).toBe(await prisma().application.count());
    });

    it("an unexpanded link is its id property <link>__id (or null), named either way in $select", async () => {
      const response = await get(
        "/v6/device?$select=id,belongs_to__application,should_be_running__release__id,is_of__device_type&$orderby=id asc",
        { "odata-version": "4.0" },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (await prisma().device.findMany({ orderBy: { id: "asc" } })).map((row) => ({
        id: row.id,
        belongs_to__application__id: row.belongs_to__application,
        should_be_running__release__id: row.should_be_running__release,
        is_of__device_type__id: row.is_of__device_type,
      }));
      expect(expected.some((row) => row.should_be_running__release__id === null)).toBe(true);
      expect(expected.some((row) => row.should_be_running__release__id !== null)).toBe(true);
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("an expanded to-one link is an object, or null when the link is null", async () => {
      const response = await get(
        "/v6/device?$select=id&$orderby=id asc&$expand=belongs_to__application($select=id,slug,organization),should_be_running__release($select=id,commit)",
        { accept: v4Minimal },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().device.findMany({
          include: { Application: true, PinnedRelease: true },
          orderBy: { id: "asc" },
        })
      ).map((row) => ({
        id: row.id,
        // Inside an expansion, an unexpanded link is its id property as well.
        belongs_to__application: {
          id: row.Application.id,
          slug: row.Application.slug,
          organization__id: row.Application.organization,
        },
        should_be_running__release: row.PinnedRelease
          ? { id: row.PinnedRelease.id, commit: row.PinnedRelease.commit }
          : null,
      }));
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("a nested to-one expansion is an object in an object; a to-many one an array", async () => {
      const response = await get(
        "/v6/application?$select=id&$orderby=id asc&$expand=organization($select=handle),owns__device($select=id;$orderby=id asc;$top=2;$expand=is_of__device_type($select=slug))",
        { "odata-version": "4.0" },
      );
      expect(response.statusCode, response.body).toBe(200);
      const expected = (
        await prisma().application.findMany({
          include: {
            Organization: true,
            Devices: { orderBy: { id: "asc" }, take: 2, include: { DeviceType: true } },
          },
          orderBy: { id: "asc" },
        })
      ).map((app) => ({
        id: app.id,
        organization: { handle: app.Organization.handle },
        owns__device: app.Devices.map((device) => ({
          id: device.id,
          is_of__device_type: { slug: device.DeviceType.slug },
        })),
      }));
      expect(JSON.parse(response.body).value).toStrictEqual(expected);
    });

    it("/device/$count is text/plain", async () => {
      const response = await get("/v6/device/$count", { "odata-version": "4.0" });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/plain/);
      expect(response.body).toBe(String(await prisma().device.count()));
    });

    it("/device/$count?$filter=… is text/plain (negotiated with $format)", async () => {
      const response = await get(`/v6/device/$count?$filter=is_online eq false&$format=${v4Minimal}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/plain/);
      expect(response.body).toBe(String(await prisma().device.count({ where: { is_online: false } })));
    });

    const badRequests = [
      { name: "unknown field", url: "/v6/device?$select=no_such_field", status: 400 },
      { name: "malformed $filter", url: "/v6/device?$filter=id eq", status: 400 },
      { name: "unknown resource", url: "/v6/no_such_resource", status: 404 },
    ];
    it.each(
      badRequests.flatMap((bad) =>
        negotiations.map((negotiation) => ({ ...negotiation, ...bad, negotiation: negotiation.name })),
      ),
    )(
      "error: $name, negotiated by $negotiation → {error:{code,message}}",
      async ({ url, status, headers, query }) => {
        const withFormat = query === "" ? url : `${url}${url.includes("?") ? query : `?${query.slice(1)}`}`;
        const response = await get(withFormat, headers);
        expect(response.statusCode, response.body).toBe(status);
        expect(response.headers["content-type"]).toMatch(/^application\/json/);
        const body = JSON.parse(response.body);
        expect(Object.keys(body)).toEqual(["error"]);
        expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
        expect(typeof body.error.code).toBe("string");
        expect(body.error.code).not.toBe("");
        expect(typeof body.error.message).toBe("string");
        expect(body.error.message).not.toBe("");
      },
    );

    it("a count, an error and $metadata say OData-Version 4.0; a pinejs answer does not", async () => {
      const count = await get("/v6/device/$count", { "odata-version": "4.0" });
      expect([count.statusCode, count.headers["odata-version"]]).toEqual([200, "4.0"]);
      const error = await get("/v6/no_such_resource", { "odata-version": "4.0" });
      expect([error.statusCode, error.headers["odata-version"]]).toEqual([404, "4.0"]);
      const metadata = await get("/v6/$metadata");
      expect(metadata.headers["odata-version"]).toBe("4.0");
      const pinejs = await get("/v6/device?$top=1");
      expect([pinejs.statusCode, pinejs.headers["odata-version"]]).toEqual([200, undefined]);
      const pinejsError = await get("/v6/no_such_resource");
      expect(pinejsError.headers["odata-version"]).toBeUndefined();
    });

    it("error: $format=xml with OData-Version 4.0 → 400 {error:{code,message}}", async () => {
      const response = await get("/v6/device?$format=xml", { "odata-version": "4.0" });
      expect(response.statusCode, response.body).toBe(400);
      const body = JSON.parse(response.body);
      expect(typeof body.error?.code).toBe("string");
      expect(typeof body.error?.message).toBe("string");
    });
  });
});
