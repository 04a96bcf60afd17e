import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The README's OData v4 examples ("Generic OData v4 clients", "Standard OData v4 at /odata/") on the
// demo data, with the ids they name: each answers what the README shows.

const maxVersion = { "odata-maxversion": "4.0" };

describe.each(databaseKinds)("the README's OData v4 examples on %s", (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
  }, 180_000);
  afterAll(() => server.close());

  const call = (method: string, url: string, payload?: object, headers: Record<string, string> = {}) =>
    server.app.inject({ method: method as "GET", url, headers, ...(payload ? { payload } : {}) });

  it("pins device 1 to release 2, writes it with its ETag, creates a device with its tags", async () => {
    const pin = await call(
      "PUT",
      "/v6/device(1)/should_be_running__release/$ref",
      { "@odata.id": "release(2)" },
      maxVersion,
    );
    expect(pin.statusCode, pin.body).toBe(204);
    const etag = (await call("GET", "/v6/device(1)", undefined, maxVersion)).headers.etag as string;
    const patched = await call(
      "PATCH",
      "/v6/device(1)",
      { note: "checked" },
      { ...maxVersion, "if-match": etag },
    );
    expect(patched.statusCode, patched.body).toBe(204);
    const created = await call(
      "POST",
      "/v6/device",
      { belongs_to__application__id: 1, device_tag: [{ tag_key: "room", value: "kitchen" }] },
      maxVersion,
    );
    expect(created.statusCode, created.body).toBe(201);
  });

  it("the $batch example: kiosks' devices, and a tag and a note in one transaction", async () => {
    const response = await call("POST", "/odata/$batch", {
      requests: [
        {
          id: "1",
          method: "GET",
          url: "device?$filter=belongs_to__application/app_name eq 'kiosks'&$select=id,device_name&$top=2",
        },
        {
          id: "2",
          atomicityGroup: "g",
          method: "POST",
          url: "application_tag",
          body: { application__id: 3, tag_key: "site", value: "lobby" },
        },
        {
          id: "3",
          atomicityGroup: "g",
          method: "PATCH",
          url: "device(41)",
          headers: { "If-Match": "*" },
          body: { note: "lobby" },
        },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const { responses } = JSON.parse(response.body) as {
      responses: {
        id: string;
        status: number;
        headers: Record<string, string>;
        body?: { value?: unknown };
      }[];
    };
    expect(responses.map((answer) => answer.status)).toEqual([200, 201, 204]);
    expect(responses[0]?.body?.value).toEqual([
      { id: 41, device_name: "kiosks-01" },
      { id: 42, device_name: "kiosks-02" },
    ]);
    expect(responses[2]?.headers.etag).toMatch(/^W\//);
  });
  it("the multipart $batch example, as the README writes it: a read, and a change set that creates and follows $1", async () => {
    // The body of the README's curl, taken from the README itself: bash's $'…' turns each \r into a CR.
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const quoted = /boundary=b" --data-binary \$'([\s\S]*?)'\n/.exec(readme)?.[1];
    expect(quoted).toBeDefined();
    const body = (quoted as string).replaceAll("\\r", "\r");
    const response = await server.app.inject({
      method: "POST",
      url: "/odata/$batch",
      headers: { "content-type": "multipart/mixed; boundary=b" },
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^multipart\/mixed; boundary=batchresponse_/);
    const statuses = [...response.body.matchAll(/^HTTP\/1\.1 (\d{3}) .*$/gm)].map((match) => match[1]);
    expect(statuses).toEqual(["200", "201", "204"]);
    expect(response.body).toContain('"id":41');
    expect(response.body).toMatch(
      /Content-ID: 1\r\n\r\nHTTP\/1\.1 201 Created\r\n[\s\S]*location: \/odata\/device\(\d+\)/,
    );
    expect(response.body).toMatch(/Content-ID: 2\r\n\r\nHTTP\/1\.1 204 No Content\r\n[\s\S]*etag: W\//);
  });
});
