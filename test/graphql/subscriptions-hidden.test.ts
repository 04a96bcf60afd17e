import { describe, expect, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { type DatabaseKind, databaseKinds } from "../support/databases.ts";
import { type Subscription, subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer } from "../support/server.ts";

// Issue 27, item 3: no event from hidden changes. Two worlds differ only in rows a subscriber cannot
// read: in the busy one, the public fleet has devices of its own organization that report state
// again and again. An anonymous caller and a member of another organization subscribe in both, and
// each gets the same events, in the same order, in both: the hidden reports change nothing they can
// read, so neither the payload nor the timing of an event may tell of them. A report that changes
// only a field the subscriber did not select sends nothing either.

const fleetFields = "appName online: ownsDeviceCount(where: { isOnline: { eq: true } })";

interface FleetEvent {
  fleetChanged: { appName: string; online: number };
}
interface DeviceEvent {
  deviceChanged: { uuid: string; isOnline: boolean; downloadProgress: number | null };
}

const visibleDevice = "a".repeat(32);
const hiddenDevices = ["b", "c", "d"].map((letter) => letter.repeat(32));

/** Long enough for any event a change could cause to arrive before the next step. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** Runs the same visible story in a fresh world; returns what each subscriber received. */
async function world(kind: DatabaseKind, busy: boolean) {
  const server = await startTestServer(kind, { DEVICE_OFFLINE_TIMEOUT: "3600", COMMAND_JOBS: "false" });
  const streams: Subscription<unknown>[] = [];
  try {
    await loadDefaultCatalogue(server.test.db);
    const send = async (method: Method, url: string, payload: unknown, token: string) => {
      const reply = await injectJson(server, method, url, payload, { authorization: `Bearer ${token}` });
      expect(reply.status, reply.raw).toBeLessThan(300);
      return reply.body;
    };
    const user = async (name: string) => {
      const password = `${name}-password`;
      await send(
        "POST",
        "/v6/user",
        { username: name, email: `${name}@example.com`, password },
        server.adminKey,
      );
      return (await injectJson(server, "POST", "/login_", { username: name, password })).raw;
    };
    const fleet = async (token: string, name: string) =>
      (
        (await send(
          "POST",
          "/v6/application",
          { app_name: name, device_type: "raspberrypi4-64" },
          token,
        )) as {
          id: number;
        }
      ).id;
    const device = async (token: string, application: number, uuid: string) => {
      const { api_key } = (await send("POST", "/device/register", { application, uuid }, token)) as {
        api_key: string;
      };
      return (report: Record<string, unknown>) => send("PATCH", `/device/v2/${uuid}/state`, report, api_key);
    };

    const owner = await user("owner");
    const member = await user("member");
    const publicFleet = await fleet(owner, "public-fleet");
    await send("PATCH", `/v6/application(${publicFleet})`, { is_public: true }, owner);
    const memberFleet = await fleet(member, "member-fleet");
    const reportVisible = await device(member, memberFleet, visibleDevice);
    const reportHidden = busy
      ? await Promise.all(hiddenDevices.map((uuid) => device(owner, publicFleet, uuid)))
      : [];
    /** In the busy world, each hidden device reports changed state a few times. */
    const hiddenReports = async (round: number) => {
      for (let i = 0; i < 3; i++)
        for (const report of reportHidden)
          await report({ status: `hidden-${round}-${i}`, download_progress: round * 10 + i });
      await settle();
    };

    const open = async <T>(token: string | undefined, query: string) => {
      const stream = await subscribe<T>(server.url, token, query);
      streams.push(stream as Subscription<unknown>);
      return stream;
    };
    const anonymousFleets = await open<FleetEvent>(
      undefined,
      `subscription { fleetChanged { ${fleetFields} } }`,
    );
    const memberFleets = await open<FleetEvent>(member, `subscription { fleetChanged { ${fleetFields} } }`);
    const memberDevices = await open<DeviceEvent>(
      member,
      "subscription { deviceChanged { uuid isOnline downloadProgress } }",
    );

    await hiddenReports(1);
    await reportVisible({ status: "Idle" });
    await memberDevices.until((r) => r.data?.deviceChanged.isOnline === true, "the member's device online");
    await memberFleets.until((r) => r.data?.fleetChanged.online === 1, "the member's fleet with one online");

    await hiddenReports(2);
    // Only the status, which the device subscription did not select, and no change to its fleet.
    await reportVisible({ status: "Updating" });
    await settle();
    await send("PATCH", `/v6/application(${publicFleet})`, { app_name: "public-renamed" }, owner);
    for (const stream of [anonymousFleets, memberFleets])
      await stream.until(
        (r) => r.data?.fleetChanged.appName === "public-renamed",
        "the public fleet renamed",
      );

    await hiddenReports(3);
    await send("PATCH", `/v6/application(${memberFleet})`, { app_name: "member-renamed" }, member);
    await memberFleets.until(
      (r) => r.data?.fleetChanged.appName === "member-renamed",
      "the member's fleet renamed",
    );
    await hiddenReports(4);
    await send("PATCH", `/v6/application(${publicFleet})`, { app_name: "public-end" }, owner);
    await reportVisible({ download_progress: 50 });
    for (const stream of [anonymousFleets, memberFleets])
      await stream.until(
        (r) => r.data?.fleetChanged.appName === "public-end",
        "the public fleet renamed again",
      );
    await memberDevices.until((r) => r.data?.deviceChanged.downloadProgress === 50, "the download progress");
    await settle();

    return {
      anonymousFleets: anonymousFleets.results,
      memberFleets: memberFleets.results,
      memberDevices: memberDevices.results,
    };
  } finally {
    for (const stream of streams) stream.close();
    await server.close();
  }
}

describe.each(databaseKinds)("subscriptions and hidden changes on %s", (kind) => {
  it("sends a subscriber the same events whether or not rows it cannot read change", {
    timeout: 240_000,
  }, async () => {
    const quiet = await world(kind, false);
    const busy = await world(kind, true);
    const fleet = (appName: string, online: number) => ({ data: { fleetChanged: { appName, online } } });
    expect(quiet).toEqual({
      anonymousFleets: [fleet("public-renamed", 0), fleet("public-end", 0)],
      memberFleets: [
        fleet("member-fleet", 1),
        fleet("public-renamed", 0),
        fleet("member-renamed", 1),
        fleet("public-end", 0),
      ],
      memberDevices: [
        { data: { deviceChanged: { uuid: visibleDevice, isOnline: true, downloadProgress: null } } },
        { data: { deviceChanged: { uuid: visibleDevice, isOnline: true, downloadProgress: 50 } } },
      ],
    });
    expect(busy).toEqual(quiet);
  });
});
