import { createHash } from "node:crypto";
import { parse } from "graphql";
import { createClient as createSseClient, type Client as SseClient } from "graphql-sse";
import { type Client, createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { aliases } from "../../bench/hostile-documents.ts";
import {
  maxTokens,
  TOKENS_BESIDE_FIELDS,
  TOKENS_PER_FIELD,
} from "../../src/graphql/execution/document-parse.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 45, item 1: a request's document is parsed within GRAPHQL_MAX_FIELDS (document-parse.ts):
// the parse stops at the field after the limit, and at maxTokens(GRAPHQL_MAX_FIELDS) tokens, on
// every path that parses a request's document (HTTP, persisted queries, graphql-ws, graphql-sse),
// and an allowed document at both limits still runs. The time it saves is the bench's to measure
// (bench/hostile.ts).

interface Reply {
  readonly data?: unknown;
  readonly errors?: readonly { message: string; extensions?: { code?: string } }[];
}

const FIELDS_REFUSED = /^This document selects more than (\d+) fields, the limit \(GRAPHQL_MAX_FIELDS\)/;
const TOKENS_REFUSED =
  /^This document holds more than (\d+) tokens, the limit \(32 for each of the GRAPHQL_MAX_FIELDS fields, and 1000 more\)/;

/** `{ devices(first: 1, where: {id: {in: [0 1 …]}}) { a1: id … } }`: `fields` fields, `tokens` tokens. */
function document(fields: number, tokens: number): string {
  const ids = Array.from({ length: fields - 1 }, (_, i) => `a${i}: id`).join(" ");
  const outside = 22 + 3 * (fields - 1);
  const values = Array.from({ length: tokens - outside }, (_, i) => i % 10).join(" ");
  const text = `{ devices(first: 1, where: { id: { in: [${values}] } }) { ${ids} } }`;
  expect(parse(text).tokenCount, "the document's own count").toBe(tokens);
  return text;
}

async function post(
  server: TestServer,
  body: Record<string, unknown>,
  accept = "application/json",
): Promise<{ status: number; reply: Reply }> {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body: JSON.stringify(body),
  });
  return { status: response.status, reply: (await response.json()) as Reply };
}

function expectRefused(reply: Reply, message: RegExp, limit: number): void {
  expect(reply.data, "a request error: no data").toBeUndefined();
  expect(reply.errors).toHaveLength(1);
  expect(reply.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  expect(reply.errors?.[0]?.message).toMatch(message);
  expect(reply.errors?.[0]?.message.match(message)?.[1]).toBe(String(limit));
}

it("the token cap leaves each allowed field 32 tokens, and 1,000 besides", () => {
  expect([TOKENS_PER_FIELD, TOKENS_BESIDE_FIELDS]).toEqual([32, 1_000]);
  expect(maxTokens(2_000)).toBe(65_000);
  expect(maxTokens(100)).toBe(4_200);
});

describe.each(databaseKinds)("request documents parsed within GRAPHQL_MAX_FIELDS on %s", (kind) => {
  let server: TestServer;
  let small: TestServer;

  beforeAll(async () => {
    server = await startTestServer(kind);
    small = await startTestServer(kind, { GRAPHQL_MAX_FIELDS: "100" });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await small?.close();
  });

  it("2,000 fields run; the parse of 2,001 stops at field 2,001: 200 as JSON, 400 as graphql-response+json", async () => {
    const allowed = await post(server, { query: aliases(2000, "__typename", 1) });
    expect(allowed.status).toBe(200);
    expect(allowed.reply.errors).toBeUndefined();
    expect(Object.keys(allowed.reply.data as object)).toHaveLength(2000);
    // What follows field 2,001 is never read: its syntax error is not what the answer names.
    const over = `${aliases(2001, "__typename", 2)} } ) this does not parse`;
    const json = await post(server, { query: over });
    expect(json.status).toBe(200);
    expectRefused(json.reply, FIELDS_REFUSED, 2000);
    expect(json.reply.errors?.[0]?.message).toMatch(/refused at its field 2001, before the rest was read/);
    const strict = await post(server, { query: over }, "application/graphql-response+json");
    expect(strict.status).toBe(400);
    expectRefused(strict.reply, FIELDS_REFUSED, 2000);
  });

  it("the issue's 2,000 aliases of `devices { deviceTag { id } }` are refused while they parse", async () => {
    const { status, reply } = await post(server, { query: aliases(2000, "devices { deviceTag { id } }", 3) });
    expect(status).toBe(200);
    expectRefused(reply, FIELDS_REFUSED, 2000);
  });

  it("at GRAPHQL_MAX_FIELDS=100: 100 fields in 4,200 tokens run, one token or one field more is refused", async () => {
    const atBoth = await post(small, { query: document(100, 4_200) });
    expect(atBoth.reply.errors).toBeUndefined();
    expect(atBoth.reply.data).toEqual({ devices: [] });
    const tokens = await post(small, { query: document(100, 4_201) });
    expect(tokens.status).toBe(200);
    expectRefused(tokens.reply, TOKENS_REFUSED, 4_200);
    const strict = await post(small, { query: document(100, 4_201) }, "application/graphql-response+json");
    expect(strict.status).toBe(400);
    expectRefused(strict.reply, TOKENS_REFUSED, 4_200);
    const fields = await post(small, { query: document(101, 400) });
    expectRefused(fields.reply, FIELDS_REFUSED, 100);
    // Tokens past the cap are refused before the document ends (this one never does).
    const unended = await post(small, { query: `{ devices(where: { id: { in: [${"1 ".repeat(5_000)}` });
    expectRefused(unended.reply, TOKENS_REFUSED, 4_200);
    // Values nested deeper than the parser's recursion: the client's error, not the server's.
    const nested = await post(server, { query: `{ devices(where: ${"[".repeat(30_000)}` });
    expect(nested.status).toBe(200);
    expect(nested.reply.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(nested.reply.errors?.[0]?.message).toMatch(/nests values deeper than the server parses/);
  });

  it("a persisted query is parsed within the limits too", async () => {
    const query = `${aliases(2001, "__typename", 4)}`;
    const sha256Hash = createHash("sha256").update(query).digest("hex");
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const sent = await post(server, { query, extensions });
    expectRefused(sent.reply, FIELDS_REFUSED, 2000);
    // By its hash alone (stored or not), never a run of it.
    const byHash = await post(server, { extensions });
    expect(byHash.reply.data).toBeUndefined();
    if (byHash.reply.errors?.[0]?.extensions?.code !== "PERSISTED_QUERY_NOT_FOUND")
      expectRefused(byHash.reply, FIELDS_REFUSED, 2000);
  });
});

describe.each(databaseKinds)("streamed operations parsed within GRAPHQL_MAX_FIELDS on %s", (kind) => {
  let server: TestServer;
  const clients: Client[] = [];
  const sseClients: SseClient<true>[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind);
  }, 120_000);
  afterAll(async () => {
    for (const client of clients) await client.dispose();
    for (const client of sseClients) client.dispose();
    await server?.close();
  });

  it("over graphql-ws, an operation over the limit is refused while it parses", async () => {
    const client = createClient({
      url: `${server.url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    clients.push(client);
    const run = (query: string) =>
      new Promise<Reply>((resolve) => {
        let result: Reply = {};
        client.subscribe(
          { query },
          {
            next: (value) => (result = value as Reply),
            error: (errors) => resolve({ errors: errors as Reply["errors"] }),
            complete: () => resolve(result),
          },
        );
      });
    const refused = await run(aliases(2001, "__typename", 5));
    expect(refused.errors?.[0]?.message).toMatch(FIELDS_REFUSED);
    const allowed = await run(aliases(2000, "__typename", 5));
    expect(allowed.errors).toBeUndefined();
    expect(Object.keys(allowed.data as object)).toHaveLength(2000);
  });

  it("over graphql-sse (single connection mode), an operation over the limit is refused while it parses", async () => {
    const posts: string[] = [];
    // Every request of the client ends with the test: a stream the client gives up on after a
    // refused operation would otherwise stay open and hold the server's close.
    const ended = new AbortController();
    const recording: typeof fetch = async (input, init) => {
      const signal = init?.signal ? AbortSignal.any([init.signal, ended.signal]) : ended.signal;
      const response = await fetch(input, { ...init, signal });
      if (init?.method === "POST") posts.push(await response.clone().text());
      return response;
    };
    const client = createSseClient({
      url: `${server.url}/graphql`,
      singleConnection: true,
      headers: { authorization: `Bearer ${server.adminKey}` },
      fetchFn: recording,
      retryAttempts: 0,
      // One stream for the client's life, closed by `dispose` (as sse-single-connection.test.ts).
      lazy: false,
      onNonLazyError: () => {},
    });
    sseClients.push(client);
    const failure = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: aliases(2001, "__typename", 6) },
        { next: () => {}, error: resolve, complete: () => resolve(undefined) },
      );
    }).finally(() => {
      client.dispose();
      ended.abort();
    });
    expect(String(failure)).toMatch(/400/);
    expect(posts).toHaveLength(1);
    const reply = JSON.parse(posts[0] ?? "{}") as Reply;
    expectRefused(reply, FIELDS_REFUSED, 2000);
  });

  it("over SSE (a POST that asks for an event stream), the same refusal", async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: aliases(2001, "__typename", 7) }),
    });
    expect(await response.text()).toMatch(/This document selects more than 2000 fields/);
  });
});
