import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 28: a query text that parsed and validated once is kept with its document, so a repeat skips
// yoga's parse and validate steps. The answers must be those of the full path.

describe("GraphQL documents seen before", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("embedded");
  });
  afterAll(() => server.close());

  const post = async (body: Record<string, unknown>) => {
    const response = await server.app.inject({
      method: "POST",
      url: "/graphql",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    return { status: response.statusCode, body: JSON.parse(response.body) as Record<string, unknown> };
  };

  it("answer a repeated query as the first time", async () => {
    const query = "query Fleets($first: Int) { applications(first: $first) { id } }";
    const first = await post({ query, variables: { first: 1 } });
    const again = await post({ query, variables: { first: 1 } });
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
  });

  it("refuse an invalid query every time, with the same errors", async () => {
    const query = "{ applications { noSuchField } }";
    const first = await post({ query });
    const again = await post({ query });
    expect(first.body.errors).toMatchObject([{ message: expect.stringContaining("noSuchField") }]);
    // The same answer, but for the id of the request it answers.
    const withoutIds = (answer: typeof first) =>
      JSON.parse(JSON.stringify(answer).replaceAll(/"requestId":"[^"]*"/g, '"requestId":""'));
    expect(withoutIds(again)).toEqual(withoutIds(first));
  });

  // graphql-jit's plugin keeps one compiled operation per document: a request naming the second
  // operation of a document ran the first (such documents now run on graphql-js).
  it("run the operation each request names, in a document of several", async () => {
    const query = "query Fleets { applications(first: 1) { id } } query Devices { devices(first: 1) { id } }";
    const fleets = await post({ query, operationName: "Fleets" });
    const devices = await post({ query, operationName: "Devices" });
    expect(fleets.status).toBe(200);
    expect(Object.keys(fleets.body.data as object)).toEqual(["applications"]);
    expect(devices.status).toBe(200);
    expect(Object.keys(devices.body.data as object)).toEqual(["devices"]);
  });
});
