import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../bench/data.ts";
import { devicesTable } from "../../bench/devices-chart.ts";
import type { DevicesResult, DevicesRow } from "../../bench/devices-result.ts";
import { runDevicesBench, writeDevicesResult } from "../../bench/devices-run.ts";
import { deviceKey, deviceUuid } from "../../bench/devices-seed.ts";
import {
  type BenchCluster,
  clusterTools,
  replicaHooks,
  startBenchCluster,
} from "../../bench/postgres-cluster.ts";
import { hashKey } from "../../src/auth/api-keys.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// `npm run bench:devices` at a tiny size (200 devices, one instance, a second a step), so the
// generator cannot rot unnoticed: its seeded keys must work, its polls must get 200 and then 304,
// its reports 200, and its result must hold a row per API and instance count.

describe.skipIf(!databaseKinds.includes("postgres"))("bench:devices, small", () => {
  let database: TestDatabase;
  let result: DevicesResult;
  const logged: string[] = [];
  beforeAll(async () => {
    database = await freshDatabase("postgres");
    result = await runDevicesBench(
      {
        databaseUrl: database.url as string,
        devices: 200,
        fleets: 2,
        instances: [1],
        apis: ["v2", "v3"],
        seconds: 1,
        stepSeconds: 1,
        rampFrom: 40,
        rampFactor: 2,
        maxRate: 80,
        // Generous: this checks the generator's plumbing on a loaded test machine, not capacity.
        p99LimitMs: 5_000,
        pollIntervalS: 900,
        reportIntervalS: 300,
        changeEvery: 3,
        connections: 4,
        // Two, so the split over load processes is what is tested (one is the same code in-process).
        loadProcesses: 2,
        warmupSeconds: 0,
        ramp: true,
        replica: false,
      },
      (message) => logged.push(message),
    );
  }, 60_000);
  afterAll(() => database?.drop());

  it("seeds a key per device, hashed in SQL exactly as the server hashes a key", async () => {
    const client = new pg.Client({ connectionString: database.url as string });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number; uuid: string; hash: string }>(
        `SELECT (SELECT count(*)::int FROM api_key k JOIN device d ON d.actor = k.is_of__actor) AS n,
                (SELECT uuid FROM device WHERE device_name = 'device-7') AS uuid,
                encode(sha256(convert_to(md5('some-salt' || '-key-' || 7), 'UTF8')), 'hex') AS hash`,
      );
      expect(rows[0]?.n).toBe(200);
      expect(rows[0]?.uuid).toBe(deviceUuid(7));
      expect(rows[0]?.hash).toBe(hashKey(deviceKey("some-salt", 7)));
    } finally {
      await client.end();
    }
    // And the keys work: every device's first poll (the priming) answered 200.
    expect(logged.some((line) => line.startsWith("v2, primary: "))).toBe(true);
  });

  it("primes every device with a 200 on both APIs, then polls get 304 and reports 200", () => {
    expect(Object.keys(result.primeMs).sort()).toEqual(["v2", "v3"]);
    expect(result.rows.map((row) => `${row.api}/${row.instances}`)).toEqual(["v2/1", "v3/1"]);
    for (const row of result.rows) {
      const steps = [row.steady, ...row.ramp];
      const polls = steps.reduce((n, step) => n + step.polls.ok + step.polls.notModified, 0);
      expect(polls, row.api).toBeGreaterThan(0);
      for (const step of steps) {
        expect(step.polls.errors + step.reports.errors, `${row.api}: ${step.why.join("; ")}`).toBe(0);
        // Every device holds its current ETag and nothing changed its target: only 304s.
        expect(step.polls.ok).toBe(0);
        expect(step.reports.ok).toBe(step.reports.sent);
      }
      expect(row.ramp.map((step) => step.rate)).toEqual([40, 80]);
      expect(row.ramp.every((step) => step.notModifiedShare === 1 || step.polls.sent === 0)).toBe(true);
      expect(row.ramp.reduce((n, step) => n + step.reports.ok, 0)).toBeGreaterThan(0);
      expect(row.capacity?.rate).toBe(80);
      expect(row.saturation).toBeNull();
      expect(row.steady.servers.cpuPercent).toHaveLength(1);
    }
  });

  it("writes the JSON, the chart and the README's table", () => {
    const dir = mkdtempSync(join(tmpdir(), "fleetgate-bench-devices-"));
    try {
      const name = writeDevicesResult(result, dir);
      const written = JSON.parse(readFileSync(join(dir, "devices-latest.json"), "utf8")) as DevicesResult;
      expect(written.rows).toHaveLength(2);
      expect(written.config.devices).toBe(200);
      expect(readFileSync(join(dir, `${name}.svg`), "utf8")).toContain("<svg");
      expect(devicesTable(result).split("\n")).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The replica phase at a tiny size: the bench starts a primary of its own, adds a streaming replica
// for the second configuration, measures both servers, and removes the replica and then everything.
describe.skipIf(!clusterTools())("bench:devices with a replica it starts itself", () => {
  let cluster: BenchCluster | undefined;
  let result: DevicesResult;
  beforeAll(async () => {
    cluster = await startBenchCluster({ fsync: "off", synchronous_commit: "off" });
    const admin = new pg.Client({ connectionString: cluster.primaryUrl("postgres") });
    await admin.connect();
    await admin.query(`CREATE DATABASE "bench"`);
    await admin.end();
    await migrateDatabase(cluster.primaryUrl("bench"));
    result = await runDevicesBench({
      databaseUrl: cluster.primaryUrl("bench"),
      ...replicaHooks(cluster, "bench"),
      devices: 100,
      fleets: 2,
      instances: [1],
      apis: ["v3"],
      seconds: 1,
      stepSeconds: 1,
      rampFrom: 40,
      rampFactor: 2,
      maxRate: 80,
      p99LimitMs: 5_000,
      pollIntervalS: 900,
      reportIntervalS: 300,
      changeEvery: 3,
      connections: 4,
      loadProcesses: 1,
      warmupSeconds: 0,
      ramp: false,
      replica: true,
    });
  }, 120_000);
  afterAll(() => cluster?.remove());

  it("measures one primary, then the primary and its replica, and removes the replica after", async () => {
    expect(result.rows.map((row) => row.database)).toEqual(["primary", "primary+replica"]);
    const [alone, replicated] = result.rows as [DevicesRow, DevicesRow];
    expect(alone.steady.postgres?.servers?.map((server) => server.role)).toEqual(["primary"]);
    expect(replicated.steady.postgres?.servers?.map((server) => server.role)).toEqual(["primary", "replica"]);
    expect(replicated.steady.connections?.replica).toBeGreaterThan(0);
    expect(alone.steady.connections?.replica).toBeNull();
    for (const row of result.rows) expect(row.steady.polls.errors + row.steady.reports.errors).toBe(0);
    expect(result.database?.replicaSetupMs).toBeGreaterThan(0);
    expect(cluster?.replicaUrl("bench")).toBeUndefined();
  });

  it("derives the headline and the capacity table from what it measured", () => {
    expect(result.headline?.map((row) => row.database)).toEqual(["primary", "primary+replica"]);
    expect(result.sizes?.afterSeed.bytesPerDevice).toBeGreaterThan(100);
    const scaling = result.scaling;
    expect(scaling?.primaryOnly.map((row) => row.devices)).toEqual([100_000, 1_000_000, 10_000_000]);
    // A replica's CPU of a one-second phase may be under a clock tick: present, not necessarily above 0.
    expect(scaling?.withReplicas).toHaveLength(3);
    expect(
      scaling?.inputs["headline[primary+replica].replicaCpuUsPerRequest (max over APIs)"],
    ).not.toBeNull();
    expect(scaling?.primaryOnly[1]?.requestsPerSecond).toBe(4409);
    expect(scaling?.primaryOnly[0]?.diskGB).toBeGreaterThan(0);
  });
});
