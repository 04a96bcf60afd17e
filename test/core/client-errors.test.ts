import { describe, expect, it } from "vitest";
import { clientErrorOf } from "../../src/core/client-errors.ts";
import {
  ConnectionFailed,
  ConnectionsBusy,
  QueryCancelled,
  StatementTimeout,
} from "../../src/db/failures.ts";
import { GatewayTimeout, ServiceUnavailable } from "../../src/errors.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("database failures as the client sees them", () => {
  it.each([
    [
      "a terminated backend (57P01)",
      withCode("terminating connection due to administrator command", "57P01"),
    ],
    ["a server starting up (57P03)", withCode("the database system is starting up", "57P03")],
    ["a lost connection (08006)", withCode("connection failure", "08006")],
    ["a refused socket", withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")],
    ["every address refused", new AggregateError([withCode("refused", "ECONNREFUSED")], "")],
    ["pg's own words for a dead socket", new Error("Connection terminated unexpectedly")],
    [
      "a connection that already failed",
      new Error("Client has encountered a connection error and is not queryable"),
    ],
    [
      "no connection to be had",
      new ConnectionFailed({ cause: withCode("not accepting connections", "55000") }),
    ],
  ])("%s is a 503 with Retry-After, without the database's words", (_name, error) => {
    const known = clientErrorOf(error);
    expect(known).toBeInstanceOf(ServiceUnavailable);
    expect(known).toMatchObject({ status: 503, retryAfterSeconds: 1 });
    expect(known?.message).toBe("The database is unavailable; try again shortly");
  });

  it("every connection busy past the wait is a 503 that says the server is busy, not the database away", () => {
    const known = clientErrorOf(
      new ConnectionsBusy(5000, { cause: new Error("timeout exceeded when trying to connect") }),
    );
    expect(known).toBeInstanceOf(ServiceUnavailable);
    expect(known).toMatchObject({ status: 503, retryAfterSeconds: 1 });
    expect(known?.message).toBe("The server is busy; try again shortly");
  });

  it("a statement over its time-out is a 504 that names the setting", () => {
    const read = clientErrorOf(new StatementTimeout("statement", 5000));
    expect(read).toBeInstanceOf(GatewayTimeout);
    expect(read?.message).toMatch(
      /^The request ran longer than the statement time-out of 5000 ms \(DATABASE_STATEMENT_TIMEOUT_MS\)/,
    );
    const write = clientErrorOf(new StatementTimeout("write", 30000));
    expect(write?.message).toMatch(/write statement time-out of 30000 ms \(DATABASE_WRITE_TIMEOUT_MS\)/);
  });

  it("a statement cancelled for a client that left is logged as 499", () => {
    expect(clientErrorOf(new QueryCancelled())).toMatchObject({ status: 499 });
  });

  it("leaves the statement's own errors alone", () => {
    expect(clientErrorOf(withCode("duplicate key", "23505"))?.status).toBe(409);
    expect(clientErrorOf(withCode("syntax error", "42601"))).toBeUndefined();
    expect(clientErrorOf(new Error("something else"))).toBeUndefined();
  });
});
