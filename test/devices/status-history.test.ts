import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markSilentDevicesOffline } from "../../src/devices/state.ts";
import { demoLogin, seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { graphql, graphqlData } from "../support/graphql/graphql.ts";
import { subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { overallStatus as oracleStatus } from "../support/oracle/oracle.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A device's stored status history (issue 48, item 4): the trigger of migration
// 20261202050000_device_status_change records every change of overall_status, whichever writer made
// it, keeps a device's newest 100, and the history is read through the model with the device's own
// read permission, on OData and GraphQL alike, one statement per read.

interface Change {
  id: number;
  device: { __id: number } | number;
  old_status: string;
  new_status: string;
  changed_at: string;
}

describe.each(databaseKinds)("a device's status history on %s", (kind) => {
  let server: TestServer;
  let deviceId: number;
  let uuid: string;
  let deviceKey: string;
  let memberToken: string;
  let outsiderToken: string;

  const inject = async (
    method: "GET" | "POST" | "PATCH" | "DELETE",
    url: string,
    payload?: object,
    token?: string,
  ) => {
    const response = await server.app.inject({
      method,
      url,
      ...(payload ? { payload } : {}),
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    return {
      status: response.statusCode,
      body: response.body,
      statements: response.headers["x-sql-statements"],
    };
  };
  const login = async (username: string, password: string) =>
    (await inject("POST", "/login_", { username, password })).body;
  const history = async (token?: string): Promise<Change[]> =>
    JSON.parse(
      (
        await inject(
          "GET",
          `/v6/device_status_change?$filter=device%20eq%20${deviceId}&$orderby=id%20desc`,
          undefined,
          token,
        )
      ).body,
    ).d;
  const overallStatus = async (id = deviceId): Promise<string> =>
    JSON.parse((await inject("GET", `/v6/device(${id})?$select=overall_status`)).body).d[0].overall_status;
  const report = (body: object) =>
    server.app.inject({
      method: "PATCH",
      url: `/device/v2/${uuid}/state`,
      headers: { authorization: `Bearer ${deviceKey}` },
      payload: body,
    });

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const device = await server.test.db.prisma.device.findFirstOrThrow({
      where: { device_name: "kiosks-03" },
    });
    deviceId = device.id;
    uuid = device.uuid;
    deviceKey = JSON.parse((await inject("POST", `/api-key/device/${deviceId}/device-key`)).body);
    memberToken = await login(demoLogin.username, demoLogin.password);
    const outsider = await inject("POST", "/v6/user", {
      username: "history-outsider",
      email: "history-outsider@example.com",
      password: "outsider-password",
    });
    expect(outsider.status).toBe(201);
    outsiderToken = await login("history-outsider", "outsider-password");
    // The outsider has an organization and a fleet of their own.
    const org = await inject("POST", "/v6/organization", { name: "Elsewhere" }, outsiderToken);
    expect(org.status, org.body).toBe(201);
  });
  afterAll(() => server.close());

  it("records each change of overall_status by every writer, equal to the status the API computes", async () => {
    const before = (await history()).length;
    const seen: string[] = [];
    const expectStep = async (what: string) => {
      const status = await overallStatus();
      const [newest] = await history();
      if (seen.at(-1) !== status) {
        expect(newest?.new_status, what).toBe(status);
        if (seen.length > 0) expect(newest?.old_status, what).toBe(seen.at(-1));
        seen.push(status);
      } else {
        expect(newest?.new_status, what).toBe(status);
      }
    };
    // A state report through the device API (online), then a download, then done.
    expect((await report({ status: "Idle" })).statusCode).toBe(200);
    await expectStep("online report");
    expect((await report({ status: "Downloading", download_progress: 10 })).statusCode).toBe(200);
    await expectStep("downloading");
    expect((await report({ status: "Downloading", download_progress: 60 })).statusCode).toBe(200);
    await expectStep("still downloading");
    expect((await report({ status: "Idle", download_progress: null })).statusCode).toBe(200);
    await expectStep("idle again");
    // An OData PATCH and a GraphQL mutation.
    expect(
      (await inject("PATCH", `/v6/device(${deviceId})`, { is_online: false, is_active: false })).status,
    ).toBe(200);
    await expectStep("deactivated over OData");
    await graphqlData(
      server,
      `mutation($id: Int!) { updateDevice(id: $id, patch: { isActive: true }) { id } }`,
      {
        id: deviceId,
      },
    );
    await expectStep("activated over GraphQL");
    expect((await report({ status: "Idle" })).statusCode).toBe(200);
    await expectStep("heard again");
    // The offline sweep, after the device went silent.
    await server.test.db.query({
      text: `UPDATE "device" SET "last_heartbeat_at" = now() - interval '100 days' WHERE "id" = $1`,
      values: [deviceId],
    });
    await markSilentDevicesOffline(server.test.db, 60);
    await expectStep("swept offline");
    // Plain SQL, and a multi-row UPDATE (a batched report writes many devices in one statement).
    await server.test.db.query({
      text: `UPDATE "device" SET "provisioning_state" = 'Post-Provisioning' WHERE "id" = $1`,
      values: [deviceId],
    });
    await expectStep("plain SQL");
    const fleet = await server.test.db.prisma.device.findMany({
      where: { Application: { app_name: "kiosks" } },
      select: { id: true },
    });
    const statusBefore = new Map<number, string>();
    for (const { id } of fleet) statusBefore.set(id, await overallStatus(id));
    const lastBefore =
      (await server.test.db.prisma.deviceStatusChange.aggregate({ _max: { id: true } }))._max.id ?? 0;
    await server.test.db.query({
      text: `UPDATE "device" d SET "provisioning_state" = NULL, "is_online" = v.online
             FROM unnest($1::int4[], $2::bool[]) AS v(id, online) WHERE d."id" = v.id`,
      values: [fleet.map((d) => d.id), fleet.map(() => true)],
    });
    await expectStep("multi-row update");
    expect(seen).toEqual([
      "idle",
      "updating",
      "idle",
      "inactive",
      "idle",
      "offline",
      "post-provisioning",
      "idle",
    ]);
    const after = await history();
    expect(after.length - before).toBe(seen.length);
    // Each device of the fleet the multi-row update changed has its own change, the others none.
    let changed = 0;
    for (const { id } of fleet) {
      const now = await overallStatus(id);
      const rows = await server.test.db.prisma.deviceStatusChange.findMany({
        where: { device: id, id: { gt: lastBefore } },
      });
      const expected =
        now === statusBefore.get(id) ? [] : [{ old_status: statusBefore.get(id), new_status: now }];
      expect(
        rows.map(({ old_status, new_status }) => ({ old_status, new_status })),
        `device ${id}`,
      ).toEqual(expected);
      changed += expected.length;
    }
    expect(changed).toBeGreaterThan(1);
  });

  it("computes the status as the API does, for every combination of the columns it reads", async () => {
    // The trigger's SQL function against the oracle (test/support/oracle/oracle.ts), which the API's
    // computed overall_status is held to by the read tests: one statement over every combination.
    const rows = await server.test.db.query<{
      is_active: boolean;
      provisioning_state: string | null;
      is_online: boolean;
      connected: boolean;
      api_heartbeat_state: string;
      download_progress: number | null;
      status: string | null;
      provisioning_progress: number | null;
      computed: string;
    }>({
      text: `SELECT a AS is_active, ps AS provisioning_state, o AS is_online, c AS connected,
               h AS api_heartbeat_state, dp AS download_progress, st AS status, pp AS provisioning_progress,
               "fleetgate_device_status"(a, ps, o, CASE WHEN c THEN now() END, h, dp, st, pp) AS computed
             FROM unnest(ARRAY[true, false]) a, unnest(ARRAY[NULL, 'Post-Provisioning', 'Pre-Provisioning']) ps,
               unnest(ARRAY[true, false]) o, unnest(ARRAY[true, false]) c,
               unnest(ARRAY['online', 'offline', 'timeout', 'unknown']) h, unnest(ARRAY[NULL, 0, 50]::int4[]) dp,
               unnest(ARRAY[NULL, 'Downloading', 'Idle']) st, unnest(ARRAY[NULL, 10]::int4[]) pp`,
      values: [],
    });
    expect(rows).toHaveLength(2 * 3 * 2 * 2 * 4 * 3 * 3 * 2);
    const wrong = rows.filter(
      (row) =>
        row.computed !== oracleStatus({ ...row, last_connectivity_event: row.connected ? new Date() : null }),
    );
    expect(wrong).toEqual([]);
  });

  it("records nothing when a report changes no status (a heartbeat)", async () => {
    expect((await report({ status: "Idle", cpu_usage: 10 })).statusCode).toBe(200);
    const before = (await history()).length;
    for (const cpu of [11, 12, 13]) expect((await report({ cpu_usage: cpu })).statusCode).toBe(200);
    expect((await history()).length).toBe(before);
  });

  it("keeps a device's newest 100 changes", async () => {
    await server.test.db.query({
      text: `DO $$ BEGIN FOR i IN 1..130 LOOP
               UPDATE "device" SET "is_active" = NOT "is_active" WHERE "id" = ${Number(deviceId)};
             END LOOP; END $$`,
      values: [],
    });
    const rows = await server.test.db.prisma.deviceStatusChange.findMany({
      where: { device: deviceId },
      orderBy: { id: "asc" },
    });
    expect(rows).toHaveLength(100);
    // The newest survive: consecutive, the last one the device's status now.
    expect(rows.at(-1)?.new_status).toBe(await overallStatus());
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.old_status).toBe(rows[i - 1]?.new_status);
  });

  it("is read by a member of the device's organization, on OData and GraphQL, in one statement", async () => {
    const odata = await inject(
      "GET",
      `/v6/device(${deviceId})?$select=id&$expand=device_status_change($orderby=id%20desc;$top=3)`,
      undefined,
      memberToken,
    );
    expect(odata.status).toBe(200);
    expect(odata.statements).toBe("1");
    expect(JSON.parse(odata.body).d[0].device_status_change).toHaveLength(3);
    expect((await history(memberToken)).length).toBe(100);
    const reply = await graphql<{ device: { deviceStatusChange: { newStatus: string }[] } }>(
      server,
      `query($id: Int!) { device(id: $id) { id deviceStatusChange(first: 5, orderBy: [{ id: DESC }]) { id oldStatus newStatus changedAt } } }`,
      { id: deviceId },
      { authorization: `Bearer ${memberToken}` },
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.statements).toBe(1);
    expect(reply.data?.device.deviceStatusChange).toHaveLength(5);
    expect(reply.data?.device.deviceStatusChange[0]?.newStatus).toBe(await overallStatus());
  });

  it("is hidden from another organization's user, on OData and GraphQL", async () => {
    const auth = { authorization: `Bearer ${outsiderToken}` };
    expect(
      JSON.parse((await inject("GET", "/v6/device_status_change", undefined, outsiderToken)).body),
    ).toEqual({
      d: [],
    });
    expect(
      JSON.parse((await inject("GET", `/v6/device_status_change/$count`, undefined, outsiderToken)).body),
    ).toEqual({ d: 0 });
    // The navigation from the device, in OData v4: the device does not exist for them.
    const path = await server.app.inject({
      method: "GET",
      url: `/v6/device(${deviceId})/device_status_change`,
      headers: { authorization: `Bearer ${outsiderToken}`, "odata-maxversion": "4.0" },
    });
    expect(path.statusCode, path.body).toBe(404);
    const own = await server.app.inject({
      method: "GET",
      url: `/v6/device(${deviceId})/device_status_change?$top=2`,
      headers: { authorization: `Bearer ${memberToken}`, "odata-maxversion": "4.0" },
    });
    expect(own.statusCode, own.body).toBe(200);
    expect(JSON.parse(own.body).value).toHaveLength(2);
    const [one] = await server.test.db.prisma.deviceStatusChange.findMany({
      where: { device: deviceId },
      take: 1,
    });
    const reply = await graphql<Record<string, unknown>>(
      server,
      `query($device: Int!, $one: Int!) {
        device(id: $device) { id deviceStatusChange { id } }
        deviceStatusChanges { id }
        deviceStatusChangesCount
        deviceStatusChange(id: $one) { id }
        devices(where: { deviceStatusChange: { some: { newStatus: { eq: "idle" } } } }) { id }
      }`,
      { device: deviceId, one: one?.id },
      auth,
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.data).toEqual({
      device: null,
      deviceStatusChanges: [],
      deviceStatusChangesCount: 0,
      deviceStatusChange: null,
      devices: [],
    });
    // The same questions from the member do find it.
    const member = await graphqlData<{
      deviceStatusChangesCount: number;
      deviceStatusChange: { id: number };
    }>(
      server,
      `query($one: Int!) { deviceStatusChangesCount deviceStatusChange(id: $one) { id } }`,
      { one: one?.id },
      { authorization: `Bearer ${memberToken}` },
    );
    expect(member.deviceStatusChangesCount).toBeGreaterThanOrEqual(100);
    expect(member.deviceStatusChange).toEqual({ id: one?.id });
  });

  it("is read by a device for itself only", async () => {
    const other = await server.test.db.prisma.device.findFirstOrThrow({
      where: { device_name: "kiosks-04" },
    });
    const otherKey = JSON.parse((await inject("POST", `/api-key/device/${other.id}/device-key`)).body);
    const own = JSON.parse(
      (await inject("GET", "/v6/device_status_change?$select=device", undefined, deviceKey)).body,
    ).d as Change[];
    expect(own.length).toBeGreaterThan(0);
    expect(new Set(own.map((row) => (row.device as { __id: number }).__id))).toEqual(new Set([deviceId]));
    const theirs = JSON.parse(
      (await inject("GET", `/v6/device_status_change?$filter=device%20eq%20${deviceId}`, undefined, otherKey))
        .body,
    ).d;
    expect(theirs).toEqual([]);
  });

  it("is read-only", async () => {
    const created = await inject(
      "POST",
      "/v6/device_status_change",
      { device: deviceId, old_status: "idle", new_status: "offline" },
      memberToken,
    );
    expect(created.status).toBeGreaterThanOrEqual(400);
    const [one] = await server.test.db.prisma.deviceStatusChange.findMany({
      where: { device: deviceId },
      take: 1,
    });
    const patched = await inject("PATCH", `/v6/device_status_change(${one?.id})`, { new_status: "x" });
    expect(patched.status).toBeGreaterThanOrEqual(400);
    const reply = await graphql(server, `mutation { deleteDeviceStatusChange(id: 1) { id } }`);
    expect(reply.errors?.[0]?.message).toMatch(/deleteDeviceStatusChange/);
  });

  it("is announced to deviceChanged with the new change, whichever writer made it", async () => {
    const subscription = await subscribe<{
      deviceChanged: {
        id: number;
        overallStatus: string;
        deviceStatusChange: { oldStatus: string; newStatus: string }[];
      };
    }>(
      server.url,
      memberToken,
      `subscription($where: DeviceWhere) { deviceChanged(where: $where) {
        id overallStatus deviceStatusChange(first: 3, orderBy: [{ id: DESC }]) { oldStatus newStatus } } }`,
      { where: { id: { eq: deviceId } } },
    );
    try {
      const status = await overallStatus();
      // An OData PATCH: only the history's trigger announces it (the write core does not).
      const patch = await inject("PATCH", `/v6/device(${deviceId})`, {
        provisioning_state: status === "post-provisioning" ? null : "Post-Provisioning",
      });
      expect(patch.status, patch.body).toBe(200);
      const now = await overallStatus();
      expect(now).not.toBe(status);
      const result = await subscription.until(
        (r) => r.data?.deviceChanged.overallStatus === now,
        "the PATCH's change",
        5_000,
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.deviceChanged.deviceStatusChange[0]).toEqual({ oldStatus: status, newStatus: now });
    } finally {
      subscription.close();
    }
  });

  it("goes with its device", async () => {
    expect((await inject("DELETE", `/v6/device(${deviceId})`)).status).toBe(200);
    const rows = await server.test.db.prisma.deviceStatusChange.count({ where: { device: deviceId } });
    expect(rows).toBe(0);
  });
});
