import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { DEVICE, FLEET, HEX32, writeHelpers } from "../support/graphql/graphql-writes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// GraphQL create mutations and input validation through the real server, mirroring
// test/odata/write-*.test.ts: expectations are computed from the rows a test inserted, and effects are
// checked by reading the rows back from the database. Updates, deletes and business rules:
// write-rules.test.ts; bulk writes, dry runs, atomicity and permissions: write-bulk.test.ts.

describe.each(databaseKinds)("GraphQL creates on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());
  const { ok, fails, basicWorld, world, fleet, prisma, expectedDevice } = writeHelpers(() => server);

  const createDevice = (input: Record<string, unknown>) =>
    ok<{ createDevice: Record<string, unknown> }>(
      `mutation($input: DeviceCreateInput!) { createDevice(input: $input) { ${DEVICE} } }`,
      { input },
    ).then((data) => data.createDevice);

  describe("create", () => {
    it("createDevice fills the server's fields and answers with the row as stored, relations included", async () => {
      const { fleet: app, dtA } = await basicWorld("gqlcreatedevice");
      const created = await createDevice({ belongsToApplicationId: app.id });
      expect(created).toEqual(await expectedDevice(created.id as number));
      expect(created.uuid).toMatch(HEX32);
      expect(created.deviceName).toBe((created.uuid as string).slice(0, 7));
      expect(created).toMatchObject({
        isOfDeviceTypeId: dtA.id,
        isActive: true,
        isOnline: false,
        shouldBeRunningRelease: null,
      });
      expect(Date.now() - Date.parse(created.createdAt as string)).toBeLessThan(60_000);
      const again = await createDevice({ belongsToApplicationId: app.id });
      expect(again.uuid).not.toBe(created.uuid);
    });

    it("createDevice with every writable field set", async () => {
      const { w, fleet: app, dtA2, release } = await basicWorld("gqlcreatefull");
      const uuid = w.uuid();
      const input = {
        belongsToApplicationId: app.id,
        uuid,
        deviceName: "named",
        note: "a note",
        isOfDeviceTypeId: dtA2.id,
        shouldBeRunningReleaseId: release.id,
        isActive: false,
      };
      const created = await createDevice(input);
      expect(created).toEqual(await expectedDevice(created.id as number));
      expect(created).toMatchObject({
        ...input,
        shouldBeRunningRelease: { id: release.id, commit: release.commit },
      });
    });

    it.each([
      ["uppercase hex", "ABCDEF0123456789ABCDEF0123456789"],
      ["31 characters", "0123456789abcdef0123456789abcde"],
      ["not hex", "0123456789abcdef0123456789abcdeg"],
      ["empty", ""],
    ])("refuses a device uuid that is %s (BAD_USER_INPUT, nothing created)", async (_case, uuid) => {
      const { fleet: app } = await basicWorld("gqlbaduuid");
      await fails(
        `mutation { createDevice(input: {belongsToApplicationId: ${app.id}, uuid: "${uuid}"}) { id } }`,
        undefined,
        "BAD_USER_INPUT",
        /uuid/,
      );
      expect(await prisma().device.count({ where: { belongs_to__application: app.id } })).toBe(0);
    });

    it("createApplication from a device type slug: slug, tracking and the organization set by the server", async () => {
      const w = world("gqlcreatefleet");
      const dt = await w.deviceType("amd64");
      const org = await w.organization(w.name("Mixed-CASE.Org"));
      const dependency = await w.fleet(org, dt);
      const { createApplication: created } = await ok<{ createApplication: Record<string, unknown> }>(
        `mutation($input: ApplicationCreateInput!) { createApplication(input: $input) { ${FLEET} } }`,
        {
          input: {
            // balena's fleet name rules (issue 19): no spaces.
            appName: "My_Fleet",
            deviceType: dt.slug,
            organizationId: org.id,
            dependsOnApplicationId: dependency.id,
          },
        },
      );
      const row = await fleet(created.id as number);
      expect(row).not.toBeNull();
      expect(created).toEqual({
        id: row?.id,
        appName: "My_Fleet",
        slug: `${org.handle}/my_fleet`.toLowerCase(),
        deviceType: dt.slug,
        isForDeviceTypeId: dt.id,
        organizationId: org.id,
        shouldTrackLatestRelease: true,
        shouldBeRunningReleaseId: null,
        commit: null,
        isPublic: false,
        dependsOnApplicationId: dependency.id,
        actor: row?.actor,
        isForDeviceType: { slug: dt.slug },
        organization: { handle: org.handle },
      });
      expect(row).toMatchObject({
        slug: created.slug,
        is_for__device_type: dt.id,
        depends_on__application: dependency.id,
      });
    });

    it.each([
      ["without a device type", `appName: "xfleet", organizationId: ORG`, /device_type|deviceType/],
      [
        "with an unknown device type slug",
        `appName: "xfleet", deviceType: "no-such-type", organizationId: ORG`,
        /device type/,
      ],
      ["without an organization", `appName: "xfleet", deviceType: "SLUG"`, /organization/],
    ])("refuses a fleet %s (BAD_USER_INPUT, nothing created)", async (_case, template, message) => {
      const w = world("gqlbadfleet");
      const dt = await w.deviceType("amd64");
      const org = await w.organization();
      const input = template.replace("ORG", String(org.id)).replace("SLUG", dt.slug);
      await fails(
        `mutation { createApplication(input: {${input}}) { id } }`,
        undefined,
        "BAD_USER_INPUT",
        message,
      );
      expect(await prisma().application.count({ where: { organization: org.id } })).toBe(0);
    });

    it("creates releases, tags, variables and organizations, each answered as stored", async () => {
      const { w, fleet: app } = await basicWorld("gqlcreateothers");
      const dev = await w.device(app);
      const commit = w.commit();
      const { createRelease: release } = await ok<{ createRelease: Record<string, unknown> }>(
        `mutation($input: ReleaseCreateInput!) { createRelease(input: $input) {
          id commit status isFinal isInvalidated semver startTimestamp belongsToApplication { id } } }`,
        {
          input: {
            belongsToApplicationId: app.id,
            commit,
            status: "running",
            isFinal: false,
            semver: "1.2.3",
            startTimestamp: "2025-05-01T10:00:00+02:00",
          },
        },
      );
      const releaseRow = await prisma().release.findUniqueOrThrow({ where: { id: release.id as number } });
      expect(release).toEqual({
        id: releaseRow.id,
        commit,
        status: "running",
        isFinal: false,
        isInvalidated: false,
        semver: "1.2.3",
        startTimestamp: "2025-05-01T08:00:00.000Z",
        belongsToApplication: { id: app.id },
      });
      expect(releaseRow.start_timestamp?.toISOString()).toBe("2025-05-01T08:00:00.000Z");

      const made = await ok<Record<string, { id: number }>>(`mutation {
        tag: createDeviceTag(input: {deviceId: ${dev.id}, tagKey: "k", value: "v"}) { id tagKey value device { uuid } }
        fleetTag: createApplicationTag(input: {applicationId: ${app.id}, tagKey: "k", value: "v"}) { id tagKey value application { id } }
        deviceVar: createDeviceEnvironmentVariable(input: {deviceId: ${dev.id}, name: "A_1", value: "1"}) { id name value deviceId }
        fleetVar: createApplicationEnvironmentVariable(input: {applicationId: ${app.id}, name: "_B", value: ""}) { id name value applicationId }
        org: createOrganization(input: {name: "N", handle: "${w.name("new-org")}"}) { id name handle }
      }`);
      expect(made.tag).toEqual({ id: made.tag?.id, tagKey: "k", value: "v", device: { uuid: dev.uuid } });
      expect(await prisma().deviceTag.findUnique({ where: { id: made.tag?.id } })).toMatchObject({
        device: dev.id,
        tag_key: "k",
        value: "v",
      });
      expect(await prisma().applicationTag.findUnique({ where: { id: made.fleetTag?.id } })).toMatchObject({
        application: app.id,
        tag_key: "k",
      });
      expect(made.fleetTag).toMatchObject({ application: { id: app.id } });
      expect(made.deviceVar).toMatchObject({ name: "A_1", value: "1", deviceId: dev.id });
      expect(
        await prisma().deviceEnvironmentVariable.findUnique({ where: { id: made.deviceVar?.id } }),
      ).toMatchObject({ name: "A_1", value: "1" });
      expect(made.fleetVar).toMatchObject({ name: "_B", value: "", applicationId: app.id });
      expect(
        await prisma().applicationEnvironmentVariable.findUnique({ where: { id: made.fleetVar?.id } }),
      ).toMatchObject({ value: "" });
      expect(await prisma().organization.findUnique({ where: { id: made.org?.id } })).toMatchObject({
        name: "N",
      });
    });

    it("an admin creates a user; the user's fields are answered, the password is not stored as given", async () => {
      const username = `gqluser${kind}`;
      const { createUser } = await ok<{ createUser: { id: number; username: string; email: string } }>(
        `mutation { createUser(input: {username: "${username}", email: "${username}@example.com", password: "secret-password"}) { id username email } }`,
      );
      const row = await prisma().user.findUniqueOrThrow({ where: { id: createUser.id } });
      expect(createUser).toEqual({ id: row.id, username, email: `${username}@example.com` });
      expect(row.password).not.toBe("secret-password");
    });
  });

  describe("validation", () => {
    it.each([
      [
        "a bad variable name",
        'createDeviceEnvironmentVariable(input: {deviceId: DEV, name: "1ABC", value: "x"})',
        /name/,
      ],
      [
        "a dash in a variable name",
        'createDeviceEnvironmentVariable(input: {deviceId: DEV, name: "A-B", value: "x"})',
        /name/,
      ],
      [
        // balena's tag key rules and messages (issue 19)
        "a blank tag key",
        'createDeviceTag(input: {deviceId: DEV, tagKey: "  ", value: "x"})',
        /^Tag keys cannot contain whitespace\.$/,
      ],
      [
        "an empty fleet tag key",
        'createApplicationTag(input: {applicationId: FLEET, tagKey: "", value: "x"})',
        /has a tag key that has a Length/,
      ],
      ["a bad handle", 'createOrganization(input: {name: "x", handle: "-bad"})', /handle/],
      ["device_name null", "updateDevice(id: DEV, patch: {deviceName: null})", /device_name|deviceName/],
      ["is_active null", "updateDevice(id: DEV, patch: {isActive: null})", /is_active|isActive/],
      [
        "the fleet null",
        "updateDevice(id: DEV, patch: {belongsToApplicationId: null})",
        /belongs_to__application|belongsToApplicationId/,
      ],
      ["app_name null", "updateApplication(id: FLEET, patch: {appName: null})", /app_name|appName/],
      [
        "tracking null",
        "updateApplication(id: FLEET, patch: {shouldTrackLatestRelease: null})",
        /should_track_latest_release|shouldTrackLatestRelease/,
      ],
      ["a release status null", "updateRelease(id: RELEASE, patch: {status: null})", /status/],
      ["an empty patch", "updateDevice(id: DEV, patch: {})", /./],
      ["no key", 'updateDevice(patch: {note: "x"})', /key/],
      ["two keys", 'updateDevice(id: DEV, uuid: "UUID", patch: {note: "x"})', /key/],
      [
        "a foreign key to nothing",
        "updateDevice(id: DEV, patch: {shouldBeRunningReleaseId: 999999})",
        /should_be_running__release|shouldBeRunningReleaseId/,
      ],
      [
        "a device type that does not exist",
        "createDevice(input: {belongsToApplicationId: FLEET, isOfDeviceTypeId: 999999})",
        /is_of__device_type|isOfDeviceTypeId/,
      ],
    ])("BAD_USER_INPUT naming it for %s, and nothing changes", async (_name, call, message) => {
      await refusedWithoutChange(call, "BAD_USER_INPUT", message);
    });

    // Issue 19: a fleet or device named in an input that does not exist (or that the caller cannot
    // see) is a write the caller may not make, as balena refuses it.
    it.each([
      ["a fleet that does not exist", "createDevice(input: {belongsToApplicationId: 999999})"],
      [
        "a dependency that does not exist",
        "updateApplication(id: FLEET, patch: {dependsOnApplicationId: 999999})",
      ],
    ])("FORBIDDEN for %s, and nothing changes", async (_name, call) => {
      await refusedWithoutChange(call, "FORBIDDEN", /may not change/);
    });

    // Refused by the schema before anything runs: graphql-js's validation phase has a code of its own.
    it.each([
      [
        "an end timestamp that is no date",
        'updateRelease(id: RELEASE, patch: {endTimestamp: "soon"})',
        /DateTime.*soon/,
      ],
      [
        // A device's reported fields (isOnline, …) are writable since issue 19; its VPN state is not.
        "a server field in the patch",
        "updateDevice(id: DEV, patch: {isConnectedToVpn: true})",
        /"isConnectedToVpn" is not defined by type "DevicePatch"/,
      ],
      [
        "a create-only field in the patch",
        'updateDevice(id: DEV, patch: {uuid: "UUID"})',
        /"uuid" is not defined by type "DevicePatch"/,
      ],
      [
        "a create field of the wrong type",
        'createDevice(input: {belongsToApplicationId: "FLEET"})',
        /Int cannot represent/,
      ],
      [
        "a field of the wrong type",
        'updateDevice(id: DEV, patch: {isActive: "no"})',
        /Boolean cannot represent/,
      ],
      [
        "a link beyond int4",
        "updateDevice(id: DEV, patch: {belongsToApplicationId: 2147483648})",
        /Int cannot represent/,
      ],
      [
        "a missing required input field",
        'createDeviceTag(input: {deviceId: DEV, tagKey: "k"})',
        /DeviceTagCreateInput\.value/,
      ],
      ["an unknown mutation", 'updateDeviceType(id: 1, patch: {name: "x"})', /updateDeviceType/],
    ])("GRAPHQL_VALIDATION_FAILED naming it for %s, and nothing changes", async (_name, call, message) => {
      await refusedWithoutChange(call, "GRAPHQL_VALIDATION_FAILED", message);
    });

    async function refusedWithoutChange(call: string, code: string, message: RegExp) {
      const { w, fleet: app, release } = await basicWorld("gqlvalidation");
      const target = await w.device(app, { note: "kept" });
      const tag = await w.deviceTag(target, "k", "v");
      const field = call
        .replaceAll("DEV", String(target.id))
        .replaceAll("FLEET", String(app.id))
        .replaceAll("RELEASE", String(release.id))
        .replaceAll("UUID", target.uuid);
      const snapshot = async () => ({
        devices: await prisma().device.findMany({
          where: { belongs_to__application: app.id },
          orderBy: { id: "asc" },
        }),
        fleet: await fleet(app.id),
        tags: await prisma().deviceTag.findMany({ where: { device: target.id } }),
        release: await prisma().release.findUnique({ where: { id: release.id } }),
        organizations: await prisma().organization.count(),
      });
      const before = await snapshot();
      await fails(`mutation { ${field} { id } }`, undefined, code, message);
      expect(await snapshot()).toEqual(before);
      expect(tag.id).toBeGreaterThan(0);
    }

    it("a unique violation is a CONFLICT whose message says unique, and changes nothing", async () => {
      const { w, org, fleet: app, other, release } = await basicWorld("gqlunique");
      const dev = await w.device(app);
      const otherDevice = await w.device(app);
      await w.deviceTag(dev, "k", "v");
      const tag2 = await w.deviceTag(dev, "k2", "v");
      await w.deviceVariable(dev, "V", "1");
      await w.fleetTag(app, "k", "v");
      await w.fleetVariable(app, "V", "1");
      const otherOrg = await w.organization();
      for (const field of [
        `createDeviceTag(input: {deviceId: ${dev.id}, tagKey: "k", value: "x"})`,
        `updateDeviceTag(id: ${tag2.id}, patch: {tagKey: "k"})`,
        `createApplicationTag(input: {applicationId: ${app.id}, tagKey: "k", value: "x"})`,
        `createDeviceEnvironmentVariable(input: {deviceId: ${dev.id}, name: "V", value: "2"})`,
        `createApplicationEnvironmentVariable(input: {applicationId: ${app.id}, name: "V", value: "2"})`,
        `createDevice(input: {belongsToApplicationId: ${app.id}, uuid: "${otherDevice.uuid}"})`,
        `createOrganization(input: {name: "x", handle: "${org.handle}"})`,
        `updateOrganization(id: ${otherOrg.id}, patch: {handle: "${org.handle}"})`,
        `updateApplication(id: ${other.id}, patch: {appName: "${app.app_name.toUpperCase()}"})`,
      ]) {
        await fails(`mutation { ${field} { id } }`, undefined, "CONFLICT", /unique/i);
      }
      // Issue 19: a commit is unique among a fleet's successful releases only; a second successful
      // one is refused with balena's rule.
      await fails(
        `mutation { createRelease(input: {belongsToApplicationId: ${app.id}, commit: "${release.commit}", status: "success"}) { id } }`,
        undefined,
        "BAD_USER_INPUT",
        /^It is necessary that each application that owns a release1/,
      );
      expect((await prisma().deviceTag.findUnique({ where: { id: tag2.id } }))?.tag_key).toBe("k2");
      expect((await prisma().organization.findUnique({ where: { id: otherOrg.id } }))?.handle).toBe(
        otherOrg.handle,
      );
      expect((await fleet(other.id))?.app_name).toBe(other.app_name);
      expect(await prisma().device.count({ where: { belongs_to__application: app.id } })).toBe(2);
    });
  });
});
