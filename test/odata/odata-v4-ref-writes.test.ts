import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld, World } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Writes to a navigation's $ref (OData v4 Protocol §11.4.6, issue 31): each is a PATCH of the row
// holding the foreign key, with the caller's predicates. Rows are checked through Prisma.

const maxVersion = { "odata-maxversion": "4.0" };
type Row = Record<string, unknown>;

describe.each(databaseKinds)("writes to $ref on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  const keys: Record<"member" | "stranger", string> = { member: "", stranger: "" };
  let theirs: { fleet: { id: number }; device: { id: number }; publicFleet: { id: number } };

  async function userKey(username: string, organization?: number): Promise<string> {
    const db = server.test.db;
    const id = await createUser(db, buildModel(), {
      username,
      email: `${username}@example.com`,
      password: `${username}-password`,
      isAdmin: false,
    });
    if (organization !== undefined) {
      await db.prisma.organizationMembership.create({
        data: { user: id, is_member_of__organization: organization },
      });
    }
    const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
    return createApiKey(db, { actor: user.actor, name: username });
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await basicWorld(server.test.db, "ref");
    keys.member = await userKey("ref-member", world.org.id);
    // Another tenant, with a fleet, a device and a public fleet of its own.
    const w = new World(server.test.db, "elsewhere");
    const org = await w.organization();
    const fleet = await w.fleet(org, world.dtA);
    const publicFleet = await w.fleet(org, world.dtA);
    await server.test.db.prisma.application.update({
      where: { id: publicFleet.id },
      data: { is_public: true },
    });
    theirs = { fleet, device: await w.device(fleet), publicFleet };
    keys.stranger = await userKey("ref-stranger", org.id);
  });
  afterAll(() => server.close());

  const send = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    server.app.inject({
      method: method as "PUT",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const as = (who: keyof typeof keys, v4 = true) => ({
    authorization: `Bearer ${keys[who]}`,
    ...(v4 ? maxVersion : {}),
  });
  const device = (id: number) => server.test.db.prisma.device.findUniqueOrThrow({ where: { id } });
  const errorOf = (response: { body: string }) => (JSON.parse(response.body) as { error: Row }).error;

  describe("a to-one navigation", () => {
    it("PUT sets the link from a relative or an absolute @odata.id: 204", async () => {
      const { w, fleet, release } = world;
      const created = await w.device(fleet);
      const url = `/v6/device(${created.id})/should_be_running__release/$ref`;
      const put = await send("PUT", url, { "@odata.id": `release(${release.id})` }, maxVersion);
      expect([put.statusCode, put.body]).toEqual([204, ""]);
      expect(put.headers["odata-version"]).toBe("4.0");
      expect((await device(created.id)).should_be_running__release).toBe(release.id);

      const other = await w.release(fleet);
      const absolute = await send(
        "PUT",
        url,
        { "@odata.id": `http://localhost/v6/release(${other.id})` },
        maxVersion,
      );
      expect(absolute.statusCode, absolute.body).toBe(204);
      expect((await device(created.id)).should_be_running__release).toBe(other.id);
      // The $ref read answers what was written.
      const read = await server.app.inject({ method: "GET", url, headers: maxVersion });
      expect(JSON.parse(read.body)["@odata.id"]).toBe(`release(${other.id})`);
    });

    it("PUT moves a device to another fleet, through the rules of a PATCH", async () => {
      const { w, fleet, other } = world;
      const created = await w.device(fleet);
      const moved = await send(
        "PUT",
        `/v6/device(${created.id})/belongs_to__application/$ref`,
        { "@odata.id": `/v6/application(${other.id})` },
        maxVersion,
      );
      expect(moved.statusCode, moved.body).toBe(204);
      expect((await device(created.id)).belongs_to__application).toBe(other.id);
    });

    it("in an older version's names: v1's device(…)/application/$ref", async () => {
      const { w, fleet, other } = world;
      const created = await w.device(fleet);
      const moved = await send(
        "PUT",
        `/v1/device(${created.id})/application/$ref`,
        { "@odata.id": `/v1/application(${other.id})` },
        maxVersion,
      );
      expect(moved.statusCode, moved.body).toBe(204);
      expect((await device(created.id)).belongs_to__application).toBe(other.id);
    });

    it("DELETE unsets a nullable link; a required one is 400 naming it", async () => {
      const { w, fleet, release } = world;
      const pinned = await w.device(fleet, { pin: release });
      const unset = await send(
        "DELETE",
        `/v6/device(${pinned.id})/should_be_running__release/$ref`,
        undefined,
        maxVersion,
      );
      expect(unset.statusCode, unset.body).toBe(204);
      expect((await device(pinned.id)).should_be_running__release).toBeNull();
      const required = await send(
        "DELETE",
        `/v6/device(${pinned.id})/belongs_to__application/$ref`,
        undefined,
        maxVersion,
      );
      expect(required.statusCode, required.body).toBe(400);
      expect(errorOf(required).message).toMatch(/'belongs_to__application' of device cannot be null/);
      expect((await device(pinned.id)).belongs_to__application).toBe(fleet.id);
    });

    it("without v4 negotiation too: 204, and a refusal is pinejs's 401", async () => {
      const { w, fleet, release } = world;
      const created = await w.device(fleet);
      const put = await send("PUT", `/v6/device(${created.id})/should_be_running__release/$ref`, {
        "@odata.id": `release(${release.id})`,
      });
      expect([put.statusCode, put.body, put.headers["odata-version"]]).toEqual([204, "", undefined]);
      expect((await device(created.id)).should_be_running__release).toBe(release.id);
      const refused = await send(
        "PUT",
        `/v6/device(${created.id})/belongs_to__application/$ref`,
        { "@odata.id": `application(${theirs.fleet.id})` },
        as("member", false),
      );
      expect(refused.statusCode, refused.body).toBe(401);
    });
  });

  describe("a collection", () => {
    it("POST binds a child by setting its link; DELETE by $id or by key unbinds it", async () => {
      const { w, fleet, release } = world;
      const [first, second] = [await w.device(fleet), await w.device(fleet)];
      const refs = `/v6/release(${release.id})/should_be_running_on__device`;
      for (const child of [first, second]) {
        const post = await send("POST", `${refs}/$ref`, { "@odata.id": `device(${child.id})` }, maxVersion);
        expect(post.statusCode, post.body).toBe(204);
        expect((await device(child.id)).should_be_running__release).toBe(release.id);
      }
      const byId = await send(
        "DELETE",
        `${refs}/$ref?$id=${encodeURIComponent(`/v6/device(${first.id})`)}`,
        undefined,
        maxVersion,
      );
      expect(byId.statusCode, byId.body).toBe(204);
      expect((await device(first.id)).should_be_running__release).toBeNull();
      const byKey = await send("DELETE", `${refs}(${second.id})/$ref`, undefined, maxVersion);
      expect(byKey.statusCode, byKey.body).toBe(204);
      expect((await device(second.id)).should_be_running__release).toBeNull();
      // A device that is not in the collection stays as it is.
      const elsewhere = await w.device(fleet, { pin: await w.release(fleet) });
      const missing = await send("DELETE", `${refs}(${elsewhere.id})/$ref`, undefined, maxVersion);
      expect(missing.statusCode, missing.body).toBe(404);
      expect((await device(elsewhere.id)).should_be_running__release).not.toBeNull();
    });

    it("POST moves a device into a fleet; leaving one, which a device must have, is 400", async () => {
      const { w, fleet, other } = world;
      const created = await w.device(fleet);
      const post = await send(
        "POST",
        `/v6/application(${other.id})/owns__device/$ref`,
        { "@odata.id": `device(${created.id})` },
        maxVersion,
      );
      expect(post.statusCode, post.body).toBe(204);
      expect((await device(created.id)).belongs_to__application).toBe(other.id);
      const leave = await send(
        "DELETE",
        `/v6/application(${other.id})/owns__device(${created.id})/$ref`,
        undefined,
        maxVersion,
      );
      expect(leave.statusCode, leave.body).toBe(400);
      expect(errorOf(leave).message).toMatch(/'belongs_to__application' of device cannot be null/);
    });
  });

  describe("what a write to $ref refuses", () => {
    it.each([
      { method: "POST", path: "device(1)/should_be_running__release/$ref", message: /is one entity: PUT/ },
      { method: "PUT", path: "application(1)/owns__device/$ref", message: /is a collection: POST/ },
      {
        method: "PUT",
        path: "device(1)/should_be_running__release/$ref",
        body: {},
        message: /entity reference/,
      },
      {
        method: "PUT",
        path: "device(1)/should_be_running__release/$ref",
        body: { "@odata.id": "device(1)" },
        message: /must name one release by its id/,
      },
      {
        method: "DELETE",
        path: "release(1)/should_be_running_on__device/$ref",
        message: /names the device to remove/,
      },
      {
        method: "PUT",
        path: "application(1)/owns__device(1)/belongs_to__application/$ref",
        message: /follows one navigation/,
      },
      {
        method: "PUT",
        path: "device(1)/device_name/$ref",
        message: /\$ref follows an entity or a collection/,
      },
      {
        method: "POST",
        path: "application(1)/is_directly_accessible_by__user/$ref",
        body: { "@odata.id": "user(1)" },
        message: /create or delete a organization_membership/,
      },
    ])("$method $path: 400", async ({ method, path, body, message }) => {
      const response = await send(method, `/v6/${path}`, body ?? { "@odata.id": "release(1)" }, maxVersion);
      expect(response.statusCode, response.body).toBe(400);
      expect(errorOf(response).message).toMatch(message);
    });
  });

  it("If-Match on a $ref is 400, not ignored: a reference has no ETag", async () => {
    const { w, fleet, release } = world;
    const created = await w.device(fleet);
    const response = await send(
      "PUT",
      `/v6/device(${created.id})/should_be_running__release/$ref`,
      { "@odata.id": `release(${release.id})` },
      { ...maxVersion, "if-match": "*" },
    );
    expect(response.statusCode, response.body).toBe(400);
    expect(errorOf(response).message).toMatch(/If-Match applies to an entity/);
    expect((await device(created.id)).should_be_running__release).toBeNull();
  });

  describe("with the caller's rights", () => {
    it("a member binds within their organization", async () => {
      const { w, fleet, release } = world;
      const created = await w.device(fleet);
      const put = await send(
        "PUT",
        `/v6/device(${created.id})/should_be_running__release/$ref`,
        { "@odata.id": `release(${release.id})` },
        as("member"),
      );
      expect(put.statusCode, put.body).toBe(204);
      expect((await device(created.id)).should_be_running__release).toBe(release.id);
    });

    it("a row the caller cannot see is 404, and nothing changes", async () => {
      const { w, fleet } = world;
      const mine = await w.device(fleet);
      // Their device, through its own link and through my fleet's collection.
      const put = await send(
        "PUT",
        `/v6/device(${theirs.device.id})/belongs_to__application/$ref`,
        { "@odata.id": `application(${fleet.id})` },
        as("member"),
      );
      expect(put.statusCode, put.body).toBe(404);
      const post = await send(
        "POST",
        `/v6/application(${fleet.id})/owns__device/$ref`,
        { "@odata.id": `device(${theirs.device.id})` },
        as("member"),
      );
      expect(post.statusCode, post.body).toBe(404);
      // Their fleet's collection, to take my device there.
      const into = await send(
        "POST",
        `/v6/application(${theirs.fleet.id})/owns__device/$ref`,
        { "@odata.id": `device(${mine.id})` },
        as("member"),
      );
      expect(into.statusCode, into.body).toBe(404);
      expect((await device(theirs.device.id)).belongs_to__application).toBe(theirs.fleet.id);
      expect((await device(mine.id)).belongs_to__application).toBe(fleet.id);
    });

    it("a row the caller sees but may not write is refused: 403 in v4, 401 in pinejs", async () => {
      const { w, fleet } = world;
      const mine = await w.device(fleet);
      const url = `/v6/application(${theirs.publicFleet.id})/owns__device/$ref`;
      const v4 = await send("POST", url, { "@odata.id": `device(${mine.id})` }, as("member"));
      expect(v4.statusCode, v4.body).toBe(403);
      const pinejs = await send("POST", url, { "@odata.id": `device(${mine.id})` }, as("member", false));
      expect(pinejs.statusCode, pinejs.body).toBe(401);
      // And the other tenant may not pull my device into their fleet either.
      const pulled = await send(
        "POST",
        `/v6/application(${theirs.fleet.id})/owns__device/$ref`,
        { "@odata.id": `device(${mine.id})` },
        as("stranger"),
      );
      expect(pulled.statusCode, pulled.body).toBe(404);
      expect((await device(mine.id)).belongs_to__application).toBe(fleet.id);
    });
  });
});
