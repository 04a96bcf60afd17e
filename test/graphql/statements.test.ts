import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 10: a query's selection set, nested relations and counts included, is one SQL statement per
// root field, never one per parent row; issue 28: a query's root fields together are one statement. 20 fleets × 10 devices, each device with two tags.

const FLEETS = 20;
const DEVICES = 10;

interface Fleet {
  appName: string;
  ownsDevice: { deviceName: string; deviceTag: { tagKey: string }[] }[];
  ownsDeviceCount: number;
}

describe.each(databaseKinds)("GraphQL statements per query on %s", (kind) => {
  let server: TestServer;
  let firstDevice = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
    const prisma = server.test.db.prisma;
    await prisma.$transaction(
      async (tx) => {
        const org = await tx.organization.create({ data: { handle: "many", name: "Many" } });
        const arch = await tx.cpuArchitecture.create({ data: { slug: "aarch64" } });
        const type = await tx.deviceType.create({
          data: { slug: "rpi", name: "Raspberry Pi", state: "RELEASED", is_of__cpu_architecture: arch.id },
        });
        for (let f = 0; f < FLEETS; f++) {
          const app = await tx.application.create({
            data: {
              app_name: `fleet-${String(f).padStart(2, "0")}`,
              slug: `many/fleet-${f}`,
              organization: org.id,
              is_for__device_type: type.id,
              actor: (await tx.actor.create({ data: {} })).id,
            },
          });
          for (let d = 0; d < DEVICES; d++) {
            const device = await tx.device.create({
              data: {
                uuid: `${f}-${d}`.padEnd(32, "0"),
                device_name: `device-${f}-${d}`,
                actor: (await tx.actor.create({ data: {} })).id,
                belongs_to__application: app.id,
                is_of__device_type: type.id,
              },
            });
            firstDevice ||= device.id;
            await tx.deviceTag.createMany({
              data: [
                { device: device.id, tag_key: "a", value: "1" },
                { device: device.id, tag_key: "b", value: "2" },
              ],
            });
          }
        }
      },
      { timeout: 120_000 },
    );
  }, 180_000);
  afterAll(() => server.close());

  // Three unbounded levels of lists are over the cost limit (1,000 × 1,000 × 1,000 rows); a page
  // size on one of them brings it within.
  it("a three-level query over 20 fleets × 10 devices is one statement", async () => {
    const reply = await graphql<{ applications: Fleet[] }>(
      server,
      "{ applications { appName ownsDevice(first: 100) { deviceName deviceTag { tagKey } } ownsDeviceCount } }",
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.statements).toBe(1);
    const fleets = reply.data?.applications ?? [];
    expect(fleets).toHaveLength(FLEETS);
    for (const [f, fleet] of fleets.entries()) {
      expect(fleet.appName).toBe(`fleet-${String(f).padStart(2, "0")}`);
      expect(fleet.ownsDeviceCount).toBe(DEVICES);
      expect(fleet.ownsDevice.map((d) => d.deviceName)).toEqual(
        Array.from({ length: DEVICES }, (_, d) => `device-${f}-${d}`),
      );
      for (const device of fleet.ownsDevice)
        expect(device.deviceTag).toEqual([{ tagKey: "a" }, { tagKey: "b" }]);
    }
  });

  it.each([
    [
      "to-one and to-many, five levels",
      "{ devices { belongsToApplication { organization { application { ownsDeviceCount ownsDevice(first: 1) { deviceTagCount } } } } } }",
    ],
    [
      "aliases of one relation with different arguments",
      `{ applications { a: ownsDevice(where: {deviceName: {endsWith: "1"}}) { id } b: ownsDevice(orderBy: {id: DESC}, first: 2) { id } c: ownsDeviceCount(where: {deviceTag: {some: {tagKey: {eq: "a"}}}}) } }`,
    ],
    [
      "fragments and inline fragments",
      "fragment D on Device { deviceTag { value } } { applications { ... on Application { ownsDevice(first: 100) { ...D } } } }",
    ],
    [
      "a filter through relations",
      `{ devices(where: {belongsToApplication: {ownsDevice: {some: {deviceTag: {none: {value: {eq: "3"}}}}}}}, orderBy: {belongsToApplication: {appName: DESC}}) { id } }`,
    ],
    [
      "a key read with nested relations",
      "{ device(id: @first) { belongsToApplication { ownsDevice { deviceTag { id } } } } }",
    ],
    [
      "a root count with a filter through relations",
      `{ devicesCount(where: {deviceTag: {every: {tagKey: {in: ["a", "b"]}}}}) }`,
    ],
  ])("%s: one statement", async (_label, query) => {
    const reply = await graphql(server, query.replace("@first", String(firstDevice)));
    expect(reply.errors).toBeUndefined();
    expect(reply.statements).toBe(1);
  });

  it("a query's root fields of every kind are one statement", async () => {
    const reply = await graphql<Record<string, unknown>>(
      server,
      `{
        applications { id ownsDevice { id } }
        devices(first: 3) { id }
        devicesCount
        device(id: ${firstDevice}) { id deviceTag { tagKey } }
        deviceTag(deviceId: ${firstDevice}, tagKey: "a") { value }
        other: applicationsCount(where: {appName: {startsWith: "fleet"}})
      }`,
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.statements).toBe(1);
    expect(reply.data?.devicesCount).toBe(FLEETS * DEVICES);
    expect(reply.data?.other).toBe(FLEETS);
    expect(reply.data?.deviceTag).toEqual({ value: "1" });
  });

  it("a query of only __typename runs no statement", async () => {
    const reply = await graphql(server, "{ __typename }");
    expect(reply.data).toEqual({ __typename: "Query" });
    expect(reply.statements).toBe(0);
  });
});
