import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The standard OData v4 service root (issue 47): `/odata/` answers every request exactly as `/v7/`
// answers it with `OData-MaxVersion: 4.0`, with no header at all, its URLs under `/odata/`; `/v7/`
// without the header keeps pinejs's format.

const maxVersion = { "odata-maxversion": "4.0" };
type Response = { statusCode: number; headers: Record<string, unknown>; body: string };

// What differs between the two roots by design: the root in URLs, and what a request computes
// afresh (the request id, the number of statements is the same).
const comparable = (response: Response, ids: Record<string, string> = {}) => {
  const normalized = (text: string, withIds = true) => {
    let result = text.replaceAll("/v7/", "/odata/");
    if (!withIds) return result;
    // An id or uuid as a whole token, not a digit of another number ("4.0").
    for (const [from, to] of Object.entries(ids))
      result = result.replaceAll(new RegExp(`(?<![\\w.])${from}(?![\\w.])`, "g"), to);
    return result;
  };
  const { "x-request-id": _id, date: _date, "content-length": _length, etag, ...headers } = response.headers;
  const { location, "odata-entityid": entityId, ...others } = headers;
  return {
    status: response.statusCode,
    // Two rows' ETags differ; whether there is one does not.
    etag: typeof etag,
    urls: normalized(JSON.stringify([location, entityId])),
    headers: JSON.parse(normalized(JSON.stringify(others), false)) as object,
    body: normalized(response.body),
  };
};

describe.each(databaseKinds)("the standard OData v4 root /odata/ on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  let device: { id: number; uuid: string };

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await basicWorld(server.test.db, "stdroot");
    device = await world.w.device(world.fleet, { note: "first" });
    await world.w.deviceTag(device as never, "room", "kitchen");
    await world.w.device(world.fleet);
  });
  afterAll(() => server.close());

  const call = (method: string, url: string, headers: Record<string, string> = {}, payload?: unknown) =>
    server.app.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    }) as Promise<Response>;
  const both = async (
    method: string,
    path: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const standard = await call(method, `/odata${path}`, headers, payload);
    const v7 = await call(method, `/v7${path}`, { ...maxVersion, ...headers }, payload);
    return { standard, v7 };
  };

  const reads = () => [
    "/",
    "/$metadata",
    `/device?$filter=belongs_to__application__id eq ${world.fleet.id}&$select=id,device_name,note&$orderby=id`,
    `/device?$filter=belongs_to__application__id eq ${world.fleet.id}&$count=true&$expand=device_tag($select=tag_key,value)`,
    `/device/$count?$filter=belongs_to__application__id eq ${world.fleet.id}`,
    `/device(${device.id})`,
    `/device(uuid='${device.uuid}')?$select=id,note`,
    `/device(${device.id})/belongs_to__application?$select=app_name`,
    `/device(${device.id})/device_name/$value`,
    `/device(${device.id})/device_tag/$count`,
    `/device(${device.id})/belongs_to__application/$ref`,
    `/device(${device.id})?$format=json;odata.metadata=full`,
    `/application(${world.fleet.id})?$expand=owns__device($select=id;$top=1)`,
    "/device(0)",
    "/device?$filter=nothing eq 1",
    "/nothing",
  ];

  it("every read answers as /v7/ with OData-MaxVersion: 4.0, with no header", async () => {
    // $batch is answered at /odata/ only, which its $metadata says.
    const batchless = (response: Response) => ({
      ...response,
      body: response.body.replaceAll(
        /<Annotation Term="Org\.OData\.Capabilities\.V1\.Batch.*?(?=<\/EntityContainer>)/g,
        "",
      ),
    });
    for (const path of reads()) {
      const { standard, v7 } = await both("GET", path);
      expect(comparable(batchless(standard)), path).toEqual(comparable(batchless(v7)));
      expect(standard.headers["odata-version"], path).toBe("4.0");
    }
  });

  it("pages through @odata.nextLink under /odata/", async () => {
    const path = `/device?$select=id&$orderby=id`;
    const { standard, v7 } = await both("GET", path, undefined, { prefer: "odata.maxpagesize=1" });
    expect(comparable(standard)).toEqual(comparable(v7));
    const next = (JSON.parse(standard.body) as { "@odata.nextLink": string })["@odata.nextLink"];
    expect(next).toMatch(/^http:\/\/[^/]+\/odata\/device\?/);
  });

  it("a service document and contexts that name /odata/", async () => {
    const service = JSON.parse((await call("GET", "/odata/")).body) as { "@odata.context": string };
    expect(service["@odata.context"]).toBe("/odata/$metadata");
    const entity = JSON.parse((await call("GET", `/odata/device(${device.id})`)).body) as Record<
      string,
      unknown
    >;
    expect(entity["@odata.context"]).toBe("/odata/$metadata#device/$entity");
    // v7's names: the pin is should_be_running__release, supervisor_release is gone.
    expect(entity).toHaveProperty("should_be_running__release__id");
    expect((await call("GET", "/odata/supervisor_release")).statusCode).toBe(404);
  });

  it("/v7/ without the header keeps pinejs's format", async () => {
    const response = await call("GET", `/v7/device(${device.id})?$select=id`);
    expect(response.body).toBe(JSON.stringify({ d: [{ id: device.id }] }));
    expect(response.headers["odata-version"]).toBeUndefined();
  });

  it("writes, $ref writes, ETags and deep insert answer as /v7/ does with the header", async () => {
    const created = await both("POST", "/device", {
      belongs_to__application__id: world.fleet.id,
      device_name: "standard-root",
      device_tag: [{ tag_key: "room", value: "hall" }],
    });
    const ids = (response: Response) => JSON.parse(response.body) as { id: number; uuid: string };
    const [a, b] = [ids(created.standard), ids(created.v7)];
    const same = { [String(b.id)]: String(a.id), [b.uuid]: a.uuid };
    expect(created.standard.statusCode, created.standard.body).toBe(201);
    expect(created.standard.headers.location).toBe(`/odata/device(${a.id})`);
    // The created tags' ids differ by one row each; compare all but ids and uuids.
    const shape = (response: Response) =>
      JSON.parse(response.body.replaceAll("/v7/", "/odata/"), (key, value) =>
        key === "id" ||
        key === "uuid" ||
        key === "actor" ||
        key.endsWith("__id") ||
        key === "@odata.etag" ||
        key === "created_at"
          ? typeof value
          : value,
      ) as unknown;
    expect(shape(created.standard)).toEqual(shape(created.v7));
    for (const [method, path, payload] of [
      ["PATCH", "/device(ID)", { note: "patched" }],
      ["PUT", "/device(ID)/should_be_running__release/$ref", { "@odata.id": `release(${world.release.id})` }],
      ["DELETE", "/device(ID)/should_be_running__release/$ref", undefined],
      ["PATCH", "/device(ID)", { nothing: 1 }],
      ["DELETE", "/device(ID)", undefined],
    ] as const) {
      const standard = await call(method, `/odata${path.replace("ID", String(a.id))}`, {}, payload);
      const v7 = await call(method, `/v7${path.replace("ID", String(b.id))}`, maxVersion, payload);
      expect(comparable(standard), `${method} ${path}`).toEqual(comparable(v7, same));
    }
  });

  it("an If-Match with a stale ETag is 412 with a v4 error, with no header", async () => {
    const target = await world.w.device(world.fleet);
    const etag = (await call("GET", `/odata/device(${target.id})`)).headers.etag as string;
    expect(
      (await call("PATCH", `/odata/device(${target.id})`, { "if-match": etag }, { note: "a" })).statusCode,
    ).toBe(204);
    const stale = await call("PATCH", `/odata/device(${target.id})`, { "if-match": etag }, { note: "b" });
    expect(stale.statusCode).toBe(412);
    expect(JSON.parse(stale.body)).toMatchObject({ error: { code: expect.any(String) } });
  });

  it("an anonymous write is 401 in a v4 error object", async () => {
    const response = await call("PATCH", `/odata/device(${device.id})`, { authorization: "" }, { note: "x" });
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ error: { message: expect.any(String) } });
  });
});
