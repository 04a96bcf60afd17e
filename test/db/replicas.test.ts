import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterTools, type ReplicaCluster, startReplicaCluster } from "../support/db/replica-cluster.ts";
import {
  caughtUp,
  DATABASE,
  prepareDatabase,
  type ReplicaServer,
  rounds,
  sql,
  startReplicaServer,
  whileReplayPaused,
} from "../support/db/replica-world.ts";
import { parseExposition, sampleValue } from "../support/http/prometheus.ts";

// Issue 46, item 5, with issue 45's "replicas never widen rights": a real primary and a real hot
// standby streaming from it (initdb, pg_basebackup, a second postmaster), fleetgate configured with
// DATABASE_REPLICA_URLS. Which database answered is told by the data: with replay paused
// (`pg_wal_replay_pause()`), a change committed on the primary is missing on the replica, so a read
// that sees it was the primary's, and one that does not the replica's.

const tools = clusterTools();
if (!tools) {
  if (process.env.CI === "true")
    throw new Error("PostgreSQL 15's initdb, pg_ctl and pg_basebackup are missing");
  process.stderr.write("\n  Replica tests skipped: no /usr/lib/postgresql/15/bin (postgresql-15)\n\n");
}

interface Person {
  readonly id: number;
  readonly token: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!tools)("reads on a streaming replica", () => {
  let cluster: ReplicaCluster;
  let adminKey: string;
  /** Max lag 20 s: a paused replica stays in use for the whole of a test. */
  let server: ReplicaServer;
  let owner: Person;
  let reader: Person;
  let fleet: number;
  let variable: number;
  let people = 0;

  async function send(method: string, url: string, payload?: unknown, bearer = adminKey, to = server) {
    const response = await to.app.inject({
      method: method as "GET",
      url,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(payload === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    let body: unknown = response.body;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, body, raw: response.body };
  }

  async function person(prefix: string): Promise<Person> {
    const username = `${prefix}${++people}`;
    const password = `${username}-password`;
    const made = await send("POST", "/v6/user", { username, email: `${username}@example.com`, password });
    expect(made.status, made.raw).toBe(201);
    const login = await send("POST", "/login_", { username, password });
    expect(login.status, login.raw).toBe(200);
    return { id: (made.body as { id: number }).id, token: login.raw };
  }

  async function organizationOf(who: Person): Promise<number> {
    const [row] = await sql<{ id: number }>(
      cluster.primaryUrl(DATABASE),
      `SELECT "is_member_of__organization" AS id FROM "organization_membership" WHERE "user" = $1`,
      [who.id],
    );
    return row?.id as number;
  }

  async function join(who: Person, organization: number): Promise<number> {
    const joined = await send("POST", "/v6/organization_membership", {
      user: who.id,
      is_member_of__organization: organization,
      role: "member",
    });
    expect(joined.status, joined.raw).toBe(201);
    return (joined.body as { id: number }).id;
  }

  /** The fleets `bearer` reads by id, through the planner (a read request). */
  async function visibleFleets(bearer: string, to = server): Promise<number[]> {
    const read = await send(
      "GET",
      `/v6/application?$select=id&$filter=id eq ${fleet}`,
      undefined,
      bearer,
      to,
    );
    expect(read.status, read.raw).toBe(200);
    return (read.body as { d: { id: number }[] }).d.map((row) => row.id);
  }

  /** The fleet variable's value as `bearer` reads it now. */
  async function valueRead(bearer: string, to = server): Promise<string> {
    const read = await send(
      "GET",
      `/v6/application_environment_variable(${variable})?$select=value`,
      undefined,
      bearer,
      to,
    );
    expect(read.status, read.raw).toBe(200);
    return (read.body as { d: { value: string }[] }).d[0]?.value as string;
  }

  /** A change no one's rights depend on, by plain SQL on the primary (no writer of fleetgate's). */
  async function changeValueBehindFleetgate(value: string): Promise<void> {
    await sql(
      cluster.primaryUrl(DATABASE),
      `UPDATE "application_environment_variable" SET "value" = $1 WHERE "id" = $2`,
      [value, variable],
    );
  }

  /** Everything written so far is on the replica, and the servers have seen it there since. */
  async function settled(...servers: ReplicaServer[]): Promise<void> {
    await caughtUp(cluster);
    for (const each of servers.length > 0 ? servers : [server]) await rounds(each.db);
  }

  beforeAll(async () => {
    cluster = await startReplicaCluster();
    adminKey = await prepareDatabase(cluster);
    server = await startReplicaServer(cluster, { DATABASE_REPLICA_MAX_LAG_MS: "20000" });
    owner = await person("owner");
    reader = await person("reader");
    await join(reader, await organizationOf(owner));
    const made = await send(
      "POST",
      "/v6/application",
      { app_name: "replicated", device_type: "raspberrypi4-64" },
      owner.token,
    );
    expect(made.status, made.raw).toBe(201);
    fleet = (made.body as { id: number }).id;
    const set = await send(
      "POST",
      "/v6/application_environment_variable",
      { application: fleet, name: "COLOUR", value: "red" },
      owner.token,
    );
    expect(set.status, set.raw).toBe(201);
    variable = (set.body as { id: number }).id;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await cluster?.remove();
  }, 120_000);

  it("serves a read request from the replica, and /metrics counts statements by target", async () => {
    await settled();
    const scrape = async () => {
      const { samples, types } = parseExposition((await send("GET", "/metrics")).raw);
      expect(types.get("fleetgate_db_statements_total")).toBe("counter");
      const family = samples.filter((sample) => sample.name === "fleetgate_db_statements_total");
      expect(family.map((sample) => sample.labels)).toEqual([{ target: "primary" }, { target: "replica" }]);
      return (target: string) => sampleValue(samples, "fleetgate_db_statements_total", { target }) as number;
    };
    const before = await scrape();
    const reads = 20;
    for (let i = 0; i < reads; i++) expect(await valueRead(reader.token)).toBe("red");
    const after = await scrape();
    expect(after("replica") - before("replica")).toBeGreaterThanOrEqual(reads);
    // The primary answered only its own checks meanwhile (one a round), not the reads.
    expect(after("primary") - before("primary")).toBeLessThan(reads);
    // And it is the replica's data: with replay paused, a change on the primary is not seen.
    await whileReplayPaused(cluster, async () => {
      await changeValueBehindFleetgate("green");
      expect(await valueRead(reader.token)).toBe("red");
    });
  });

  it("lets a writer read their own write at once while replay is paused; others read the replica", async () => {
    await changeValueBehindFleetgate("blue");
    await settled();
    await whileReplayPaused(cluster, async () => {
      const patched = await send(
        "PATCH",
        `/v6/application_environment_variable(${variable})`,
        { value: "orange" },
        owner.token,
      );
      expect(patched.status, patched.raw).toBe(200);
      // The writer, at once and a while later (replay stays paused): never the stale value.
      expect(await valueRead(owner.token)).toBe("orange");
      await rounds(server.db);
      expect(await valueRead(owner.token)).toBe("orange");
      // Someone else reads the replica, which has not replayed it.
      expect(await valueRead(reader.token)).toBe("blue");
    });
  });

  it("ends a deleted API key's access at once while replay is paused", async () => {
    const made = await send("POST", "/api-key/user/full", { name: "doomed" }, reader.token);
    expect(made.status, made.raw).toBe(200);
    const key = made.body as string;
    const [row] = await sql<{ id: number }>(
      cluster.primaryUrl(DATABASE),
      `SELECT "id" FROM "api_key" WHERE "name" = 'doomed'`,
    );
    await settled();
    expect(await visibleFleets(key)).toEqual([fleet]);
    await whileReplayPaused(cluster, async () => {
      const deleted = await send("DELETE", `/v6/api_key(${row?.id})`);
      expect(deleted.status, deleted.raw).toBe(200);
      const read = await send("GET", `/v6/application?$select=id`, undefined, key);
      expect(read.status, read.raw).toBe(401);
    });
  });

  it("ends a session at once when its password changes while replay is paused", async () => {
    const who = await person("session");
    await settled();
    await whileReplayPaused(cluster, async () => {
      const changed = await send("PATCH", `/v6/user(${who.id})`, { password: "a-new-password" });
      expect(changed.status, changed.raw).toBe(200);
      expect((await send("GET", "/v6/application?$select=id", undefined, who.token)).status).toBe(401);
    });
  });

  it("hides a fleet at once from a member removed while replay is paused", async () => {
    const member = await person("member");
    const membership = await join(member, await organizationOf(owner));
    await settled();
    expect(await visibleFleets(member.token)).toEqual([fleet]);
    await whileReplayPaused(cluster, async () => {
      const removed = await send(
        "DELETE",
        `/v6/organization_membership(${membership})`,
        undefined,
        owner.token,
      );
      expect(removed.status, removed.raw).toBe(200);
      expect(await visibleFleets(member.token)).toEqual([]);
      // And stays hidden while the replica still holds the membership.
      await rounds(server.db);
      expect(await visibleFleets(member.token)).toEqual([]);
    });
  });

  it("hides a fleet from a member removed by plain SQL once the change is announced (the trigger)", async () => {
    const member = await person("sql-member");
    const membership = await join(member, await organizationOf(owner));
    await settled();
    expect(await visibleFleets(member.token)).toEqual([fleet]);
    await whileReplayPaused(cluster, async () => {
      await sql(cluster.primaryUrl(DATABASE), `DELETE FROM "organization_membership" WHERE "id" = $1`, [
        membership,
      ]);
      await eventually(async () => expect(await visibleFleets(member.token)).toEqual([]));
    });
  });

  it("takes admin reads from a demoted admin while replay is paused", async () => {
    const admin = await person("admin");
    await sql(cluster.primaryUrl(DATABASE), `UPDATE "user" SET "is_admin" = true WHERE "id" = $1`, [
      admin.id,
    ]);
    await settled();
    // Not a member of the fleet's organization: an admin's right alone reads it.
    await eventually(async () => expect(await visibleFleets(admin.token)).toEqual([fleet]));
    await whileReplayPaused(cluster, async () => {
      await sql(cluster.primaryUrl(DATABASE), `UPDATE "user" SET "is_admin" = false WHERE "id" = $1`, [
        admin.id,
      ]);
      await eventually(async () => expect(await visibleFleets(admin.token)).toEqual([]));
      await rounds(server.db);
      expect(await visibleFleets(admin.token)).toEqual([]);
    });
  });

  it("leaves a replica that lags beyond DATABASE_REPLICA_MAX_LAG_MS out, without an error", async () => {
    const lagging = await startReplicaServer(cluster, { DATABASE_REPLICA_MAX_LAG_MS: "1500" });
    try {
      await changeValueBehindFleetgate("violet");
      await settled(lagging);
      await whileReplayPaused(cluster, async () => {
        await changeValueBehindFleetgate("indigo");
        // Within the lag allowed, the replica answers (what it has); beyond it, the primary.
        expect(await valueRead(reader.token, lagging)).toBe("violet");
        await sleep(2_500);
        await rounds(lagging.db);
        expect(await valueRead(reader.token, lagging)).toBe("indigo");
      });
      // Caught up again, it is back in use.
      await settled(lagging);
      await whileReplayPaused(cluster, async () => {
        await changeValueBehindFleetgate("yellow");
        expect(await valueRead(reader.token, lagging)).toBe("indigo");
      });
    } finally {
      await lagging.close();
    }
  });

  it("reads on the primary without an error while the replica is stopped, and on it again after", async () => {
    await settled();
    await cluster.stopReplica();
    let restarted = false;
    try {
      await changeValueBehindFleetgate("stopped");
      for (let i = 0; i < 5; i++) expect(await valueRead(reader.token)).toBe("stopped");
      await rounds(server.db, 1);
      for (let i = 0; i < 5; i++) expect(await valueRead(reader.token)).toBe("stopped");
      await cluster.startReplica();
      restarted = true;
      await settled();
      await whileReplayPaused(cluster, async () => {
        await changeValueBehindFleetgate("restarted");
        await eventually(async () => expect(await valueRead(reader.token)).toBe("stopped"));
      });
    } finally {
      if (!restarted) await cluster.startReplica();
    }
  });
});

/** Until `check` passes (an announcement by NOTIFY is on its way), for at most 5 s. */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (const deadline = Date.now() + 5_000; ; await sleep(50)) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}
