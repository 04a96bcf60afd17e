import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultMediaType } from "../../src/graphql/execution/negotiation.ts";
import { databaseKinds } from "../support/databases.ts";
import { answeredBy } from "../support/graphql/graphql-clients.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 47, item 1: whatever a client accepts, a query is answered by the same one statement with
// the same body; its media type is the one yoga's HTTP layer negotiates for the same header (an
// invalid query, which only yoga answers, shows which), and its status follows GraphQL over HTTP
// for that type.

const RANGES = [
  "application/json",
  "application/graphql-response+json",
  "application/graphql+json",
  "*/*",
  "application/*",
  "text/event-stream",
  "multipart/mixed",
  "application/xml",
  "application/json;charset=latin1",
  "application/graphql-response+json; charset=utf-8",
];

const acceptHeader = fc.option(
  fc
    .array(
      fc.tuple(
        fc.constantFrom(...RANGES),
        fc.option(fc.constantFrom(";q=0.9", ";q=0.1", "; q=1"), { nil: "" }),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .chain((ranges) =>
      fc.constantFrom(", ", ",").map((separator) => ranges.map(([range, q]) => range + q).join(separator)),
    ),
  { nil: undefined },
);

const QUERY = `query Fleets($first: Int) { applications(first: $first, orderBy: [{id: ASC}]) { id appName ownsDeviceCount } }`;

describe.each(databaseKinds)("Accept negotiation on %s", (kind) => {
  let server: TestServer;
  let plain: { body: string; statements: string | undefined };

  const post = (accept: string | undefined, body: unknown) =>
    server.app.inject({
      method: "POST",
      url: "/graphql",
      headers: { "content-type": "application/json", ...(accept === undefined ? {} : { accept }) },
      payload: JSON.stringify(body),
    });

  beforeAll(async () => {
    server = await startTestServer(kind);
    const reply = await post("application/json", { query: QUERY, variables: { first: 3 } });
    plain = { body: reply.body, statements: reply.headers["x-sql-statements"] as string | undefined };
    expect(plain.statements).toBe("1");
  }, 60_000);

  afterAll(() => server?.close());

  it("answers a query alike in the media type yoga chooses, whatever the Accept and unused extensions", async () => {
    await fc.assert(
      fc.asyncProperty(acceptHeader, fc.boolean(), async (accept, extensions) => {
        const chosen = resultMediaType(accept);
        const sent = {
          query: QUERY,
          variables: { first: 3 },
          ...(extensions
            ? { extensions: { clientLibrary: { name: "@apollo/client", version: "4.3.8" } } }
            : {}),
        };
        const before = await answeredBy(server);
        const reply = await post(accept, sent);
        const after = await answeredBy(server);
        const invalid = await post(accept, { query: "{ noSuchField }" });
        // yoga's own choice for the same header.
        expect(reply.headers["content-type"]).toBe(invalid.headers["content-type"]);
        if (!chosen) {
          expect(String(reply.headers["content-type"] ?? "")).not.toMatch(/json/);
          return;
        }
        expect(reply.headers["content-type"]).toBe(`${chosen}; charset=utf-8`);
        expect(reply.statusCode).toBe(200);
        expect(reply.body).toBe(plain.body);
        expect(reply.headers["x-sql-statements"]).toBe("1");
        expect(after.database - before.database).toBe(1);
        // GraphQL over HTTP: no data is a 4xx for application/graphql-response+json only.
        expect(invalid.statusCode).toBe(chosen === "application/json" ? 200 : 400);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("chooses as yoga does for the clients' own headers", () => {
    expect(resultMediaType(undefined)).toBe("application/json");
    expect(resultMediaType("*/*")).toBe("application/json");
    expect(resultMediaType("application/graphql-response+json,application/json;q=0.9")).toBe(
      "application/graphql-response+json",
    );
    expect(
      resultMediaType(
        "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed",
      ),
    ).toBe("application/graphql-response+json");
    expect(resultMediaType("text/event-stream")).toBeUndefined();
  });
});
