import { describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { REDACTED, redactText, redactUrl } from "../src/redact.ts";

// Each layer of the log's redaction on its own; test/server/log-secrets.test.ts checks the whole through a
// real server.

describe("redactUrl", () => {
  it("replaces the value of every credential parameter and keeps the rest as it was", () => {
    expect(redactUrl("/v6/device?$select=id&apikey=abc123&$top=2")).toBe(
      `/v6/device?$select=id&apikey=${REDACTED}&$top=2`,
    );
    expect(redactUrl("/x?API_KEY=a&token=b&access_token=c&password=d&jwt=e&name=f#top")).toBe(
      `/x?API_KEY=${REDACTED}&token=${REDACTED}&access_token=${REDACTED}&password=${REDACTED}&jwt=${REDACTED}&name=f#top`,
    );
    // A name spelled with percent-encoding is still that name.
    expect(redactUrl("/x?api%6Bey=abc")).toBe(`/x?api%6Bey=${REDACTED}`);
    expect(redactUrl("/v6/application?$filter=app_name%20eq%20'key'&$select=api_key")).toBe(
      "/v6/application?$filter=app_name%20eq%20'key'&$select=api_key",
    );
    expect(redactUrl("/ping")).toBe("/ping");
    expect(redactUrl("/x?%zz=1&apikey")).toBe(`/x?%zz=1&apikey=${REDACTED}`);
  });
});

describe("redactText", () => {
  it("scrubs query credentials, authorization values, JWTs and quoted credential members", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJpZCI6MX0.c2lnbmF0dXJlLXNlY3JldA";
    const line = JSON.stringify({
      msg: `GET http://10.0.0.2:48484/v1/device?apikey=k3y-s3cret failed; Authorization: Bearer t0ken-s3cret; ${jwt}`,
      err: {
        message: 'Invalid `prisma.user.create()` invocation: { password: "hunter2-s3cret", username: "x" }',
      },
      body: '{"password":"json-s3cret","name":"ok"}',
      api_key: "member-s3cret",
    });
    const scrubbed = redactText(line);
    for (const secret of [
      "k3y-s3cret",
      "t0ken-s3cret",
      jwt,
      "hunter2-s3cret",
      "json-s3cret",
      "member-s3cret",
    ])
      expect(scrubbed).not.toContain(secret);
    // Still JSON, and what is not a credential stays.
    const parsed = JSON.parse(scrubbed);
    expect(parsed.msg).toBe(
      `GET http://10.0.0.2:48484/v1/device?apikey=${REDACTED} failed; Authorization: Bearer ${REDACTED}; ${REDACTED}`,
    );
    expect(parsed.err.message).toContain('username: "x"');
    expect(JSON.parse(parsed.body)).toEqual({ password: REDACTED, name: "ok" });
    expect(parsed.api_key).toBe(REDACTED);
  });
});

describe("createLogger", () => {
  it("writes no credential of headers, bodies, requests or database errors", () => {
    const written: string[] = [];
    const logger = createLogger("info", { write: (line: string) => void written.push(line) });
    const error = Object.assign(new Error("insert failed"), {
      code: "23502",
      detail: "Failing row contains (7, row-s3cret, null).",
      params: ["param-s3cret"],
      query: 'INSERT INTO "api_key" ("key") VALUES ($1)',
    });
    logger.error({ err: error }, "unexpected error");
    logger.info({
      req: {
        method: "GET",
        url: "/v6/device?apikey=url-s3cret",
        headers: { authorization: "Bearer h-s3cret" },
      },
    });
    logger.info({
      headers: { authorization: "ApiKey header-s3cret" },
      body: { password: "body-s3cret", username: "u" },
    });
    const log = written.join("");
    for (const secret of [
      "row-s3cret",
      "param-s3cret",
      "url-s3cret",
      "h-s3cret",
      "header-s3cret",
      "body-s3cret",
    ])
      expect(log).not.toContain(secret);
    const [errorLine, requestLine, bodyLine] = written.map((line) => JSON.parse(line));
    expect(errorLine.err).toMatchObject({ message: "insert failed", code: "23502", query: error.query });
    expect(requestLine.req).toEqual({ method: "GET", url: `/v6/device?apikey=${REDACTED}` });
    expect(bodyLine.body.username).toBe("u");
  });
});
