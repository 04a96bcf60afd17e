import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe.each(databaseKinds)("JSON request bodies on %s", (kind) => {
  let server: TestServer;
  let fleet: number;
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const reply = await server.app.inject({ method: "GET", url: "/v6/application?$select=id&$top=1" });
    fleet = JSON.parse(reply.body).d[0].id;
  });
  afterAll(() => server?.close());

  const send = (url: string, payload: string | Buffer, method: "POST" | "PATCH" = "POST") =>
    server.app.inject({ method, url, payload, headers: { "content-type": "application/json" } });
  const tagBody = (value: string) =>
    `{"application":${fleet},"tag_key":"k-${Math.random()}","value":"${value}"}`;

  it("refuses a lone UTF-16 surrogate, naming the field, instead of storing U+FFFD", async () => {
    const reply = await send("/v6/application_tag", tagBody("bad \\ud800 value"));
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body)).toBe(
      "The body's field value holds a lone UTF-16 surrogate, which is not Unicode text",
    );
    const trailing = await send(`/v6/application(${fleet})`, '{"app_name":"x\\uDC00"}', "PATCH");
    expect(trailing.statusCode).toBe(400);
    expect(JSON.parse(trailing.body)).toMatch(/field app_name holds a lone UTF-16 surrogate/);
    const stored = await server.app.inject({
      method: "GET",
      url: `/v6/application_tag?$filter=application eq ${fleet} and contains(value,'bad')`,
    });
    expect(JSON.parse(stored.body).d).toEqual([]);
  });

  it("names nested fields, array items and field names", async () => {
    const nested = await send("/graphql", '{"query":"{ __typename }","variables":{"list":["ok","\\ud83d"]}}');
    expect(nested.statusCode).toBe(400);
    expect(nested.body).toContain("field variables.list[1] holds a lone UTF-16 surrogate");
    const key = await send("/v6/application_tag", '{"\\udfff":1}');
    expect(JSON.parse(key.body)).toBe(
      "A field name in the body holds a lone UTF-16 surrogate, which is not Unicode text",
    );
    const inner = await send("/v6/application_tag", '{"a":{"b\\udfff":1}}');
    expect(JSON.parse(inner.body)).toMatch(/^A field name inside the body's field a holds/);
  });

  it("refuses bytes that are not UTF-8 (an encoded surrogate among them)", async () => {
    const body = Buffer.concat([
      Buffer.from(tagBody("x").replace('"x"', '"')),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]);
    const reply = await send("/v6/application_tag", body);
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body)).toBe("The body is not valid UTF-8");
  });

  it("stores a surrogate pair (an emoji written as escapes) as the character it is", async () => {
    const reply = await send("/v6/application_tag", tagBody("sun \\ud83c\\udf1e"));
    expect(reply.statusCode).toBe(201);
    const id = JSON.parse(reply.body).id;
    const read = await server.app.inject({ method: "GET", url: `/v6/application_tag(${id})?$select=value` });
    expect(JSON.parse(read.body).d[0].value).toBe("sun 🌞");
  });

  it("still takes an empty body with a JSON content type as no body", async () => {
    const reply = await server.app.inject({
      method: "DELETE",
      url: "/v6/application_tag(999999)",
      headers: { "content-type": "application/json" },
    });
    expect(reply.statusCode).toBe(200);
  });
});
