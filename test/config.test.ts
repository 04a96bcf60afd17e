import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";

const invalid = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe("durations in the configuration", () => {
  it.each([
    ["DEVICE_OFFLINE_TIMEOUT", "0", "seconds from 1 to 31536000"],
    ["DEVICE_OFFLINE_TIMEOUT", "31536001", "seconds from 1 to 31536000"],
    ["DEVICE_OFFLINE_TIMEOUT", "1.5", "seconds from 1 to 31536000"],
    ["DEVICE_OFFLINE_TIMEOUT", "soon", "seconds from 1 to 31536000"],
    ["PROXY_TIMEOUT_MS", "2147483648", "milliseconds from 1 to 2147483647"],
    ["DATABASE_STATEMENT_TIMEOUT_MS", "-1", "milliseconds from 0 to 2147483647"],
    ["DATABASE_WRITE_TIMEOUT_MS", "1e12", "milliseconds from 0 to 2147483647"],
    ["DATABASE_CONNECT_TIMEOUT_MS", "0", "milliseconds from 1 to 2147483647"],
  ])("refuses %s=%s, naming the variable and the range", (name, value, range) => {
    expect(invalid({ [name]: value })).toContain(`${name}: must be a whole number of ${range}`);
  });

  it("takes long durations a timer could not hold in one step", () => {
    // 6,442,451 s: a sweep period (a third) just over Node's 2^31-1 ms timer limit.
    expect(loadConfig({ DEVICE_OFFLINE_TIMEOUT: "6442451" }).DEVICE_OFFLINE_TIMEOUT).toBe(6_442_451);
  });

  it("has defaults for the database's time-outs and the OData limits", () => {
    expect(loadConfig({})).toMatchObject({
      DATABASE_STATEMENT_TIMEOUT_MS: 5_000,
      DATABASE_WRITE_TIMEOUT_MS: 30_000,
      DATABASE_CONNECT_TIMEOUT_MS: 5_000,
      ODATA_MAX_COST: 10_000_000_000,
      ODATA_UNBOUNDED_ROWS: 1000,
      ODATA_MAX_EXPAND_DEPTH: 5,
    });
  });
});

describe("the settings for a pooler in front of PostgreSQL", () => {
  it("default to named prepared statements and no direct URL", () => {
    const config = loadConfig({});
    expect(config.DATABASE_PREPARED_STATEMENTS).toBe(true);
    expect(config.DATABASE_DIRECT_URL).toBeUndefined();
  });

  it("take false and a direct URL, and refuse anything else", () => {
    const direct = "postgres://fleetgate@db.internal:5432/fleetgate";
    const config = loadConfig({ DATABASE_PREPARED_STATEMENTS: "false", DATABASE_DIRECT_URL: direct });
    expect(config).toMatchObject({ DATABASE_PREPARED_STATEMENTS: false, DATABASE_DIRECT_URL: direct });
    expect(invalid({ DATABASE_PREPARED_STATEMENTS: "no" })).toContain("DATABASE_PREPARED_STATEMENTS");
    expect(invalid({ DATABASE_DIRECT_URL: "the database" })).toContain("DATABASE_DIRECT_URL");
  });
});

describe("the settings of read replicas", () => {
  const primary = "postgres://fleetgate@db:5432/fleetgate";

  it("default to none, with a lag of 1 s allowed", () => {
    expect(loadConfig({})).toMatchObject({ DATABASE_REPLICA_URLS: [], DATABASE_REPLICA_MAX_LAG_MS: 1_000 });
  });

  it("take comma-separated PostgreSQL URLs of DATABASE_URL's replicas", () => {
    const config = loadConfig({
      DATABASE_URL: primary,
      DATABASE_REPLICA_URLS: " postgres://fleetgate@r1:5432/fleetgate, postgresql://fleetgate@r2/fleetgate ,",
      DATABASE_REPLICA_MAX_LAG_MS: "250",
    });
    expect(config.DATABASE_REPLICA_URLS).toEqual([
      "postgres://fleetgate@r1:5432/fleetgate",
      "postgresql://fleetgate@r2/fleetgate",
    ]);
    expect(config.DATABASE_REPLICA_MAX_LAG_MS).toBe(250);
  });

  it("refuse what is not a PostgreSQL URL, replicas without DATABASE_URL, and a lag out of range", () => {
    expect(invalid({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: "r1:5432" })).toContain(
      "DATABASE_REPLICA_URLS: must be PostgreSQL URLs",
    );
    expect(invalid({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: "http://r1/fleetgate" })).toContain(
      "DATABASE_REPLICA_URLS: must be PostgreSQL URLs",
    );
    expect(invalid({ DATABASE_REPLICA_URLS: "postgres://r1/fleetgate" })).toContain(
      "DATABASE_REPLICA_URLS: needs DATABASE_URL",
    );
    expect(invalid({ DATABASE_REPLICA_MAX_LAG_MS: "0" })).toContain(
      "DATABASE_REPLICA_MAX_LAG_MS: must be a whole number of milliseconds from 1 to 2147483647",
    );
  });
});
