import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// ETags (OData v4 Protocol §11.4.1.1, RFC 9110 §13.1, issue 31): a weak ETag per entity, computed in
// SQL from what the caller reads of the row; If-None-Match on a read by key, If-Match on a write by
// key, checked inside the write's transaction. pinejs callers send neither and see nothing of it.

const maxVersion = { "odata-maxversion": "4.0" };
const WEAK = /^W\/"[0-9a-f]{32}"$/;
type Row = Record<string, unknown>;

describe.each(databaseKinds)("ETags on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await basicWorld(server.test.db, "etag");
  });
  afterAll(() => server.close());

  const call = (method: string, url: string, headers: Record<string, string> = {}, payload?: unknown) =>
    server.app.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const body = (response: { body: string }) => JSON.parse(response.body) as Row;
  const etagOf = async (url: string, headers: Record<string, string> = maxVersion) => {
    const response = await call("GET", url, headers);
    expect(response.statusCode, response.body).toBe(200);
    return response.headers.etag as string;
  };

  describe("reads", () => {
    it("an entity by key carries @odata.etag after its context, and the same ETag header", async () => {
      const device = await world.w.device(world.fleet);
      const response = await call("GET", `/v6/device(${device.id})?$select=id,device_name`, maxVersion);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers.etag).toMatch(WEAK);
      expect(Object.keys(body(response))).toEqual(["@odata.context", "@odata.etag", "id", "device_name"]);
      expect(body(response)["@odata.etag"]).toBe(response.headers.etag);
      // The ETag is the row's, whatever the $select.
      expect(await etagOf(`/v6/device(${device.id})`)).toBe(response.headers.etag);
    });

    it("pinejs answers carry none, byte for byte as before", async () => {
      const device = await world.w.device(world.fleet);
      const response = await call("GET", `/v6/device(${device.id})?$select=id,device_name`);
      expect(response.headers.etag).toBeUndefined();
      expect(response.body).toBe(JSON.stringify({ d: [{ id: device.id, device_name: device.device_name }] }));
    });

    it("a collection: none with minimal metadata; each entity's with full; none with none", async () => {
      const url = `/v6/device?$select=id&$filter=belongs_to__application eq ${world.fleet.id}&$orderby=id`;
      await world.w.device(world.fleet);
      const minimal = body(await call("GET", url, maxVersion)).value as Row[];
      expect(minimal.every((entity) => !("@odata.etag" in entity))).toBe(true);
      const full = body(await call("GET", url, { accept: "application/json;odata.metadata=full" }))
        .value as Row[];
      expect(full.length).toBeGreaterThan(0);
      for (const entity of full) {
        expect(Object.keys(entity).slice(0, 4)).toEqual([
          "@odata.type",
          "@odata.id",
          "@odata.etag",
          "@odata.editLink",
        ]);
        expect(entity["@odata.etag"]).toBe(await etagOf(`/v6/device(${entity.id})`));
      }
      const first = full[0] as Row;
      const none = await call("GET", `/v6/device(${first.id})`, {
        accept: "application/json;odata.metadata=none",
      });
      expect(body(none)["@odata.etag"]).toBeUndefined();
      expect(none.headers.etag).toBe(first["@odata.etag"]);
    });

    it("changes when the row changes, and If-None-Match with the current one is 304", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      const before = await etagOf(url);
      const same = await call("GET", url, { ...maxVersion, "if-none-match": before });
      expect([same.statusCode, same.body, same.headers.etag]).toEqual([304, "", before]);
      await server.test.db.prisma.device.update({ where: { id: device.id }, data: { note: "changed" } });
      const after = await etagOf(url);
      expect(after).not.toBe(before);
      const stale = await call("GET", url, { ...maxVersion, "if-none-match": before });
      expect(stale.statusCode).toBe(200);
      expect(body(stale).note).toBe("changed");
    });

    it("moves only with what the caller reads: a member's ETag of a co-member ignores their email", async () => {
      const db = server.test.db;
      const users = [] as { id: number; key: string }[];
      for (const username of ["etag-owner", "etag-peer"]) {
        const id = await createUser(db, buildModel(), {
          username,
          email: `${username}@example.com`,
          password: `${username}-password`,
          isAdmin: false,
        });
        await db.prisma.organizationMembership.create({
          data: { user: id, is_member_of__organization: world.org.id },
        });
        const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
        users.push({ id, key: await createApiKey(db, { actor: user.actor, name: username }) });
      }
      const [owner, peer] = users as [{ id: number; key: string }, { id: number; key: string }];
      const url = `/v6/user(${owner.id})`;
      const as = (key: string) => ({ ...maxVersion, authorization: `Bearer ${key}` });
      const [peerBefore, ownerBefore] = [await etagOf(url, as(peer.key)), await etagOf(url, as(owner.key))];
      expect(peerBefore).not.toBe(ownerBefore);
      await db.prisma.user.update({ where: { id: owner.id }, data: { email: "elsewhere@example.com" } });
      expect(await etagOf(url, as(peer.key))).toBe(peerBefore);
      expect(await etagOf(url, as(owner.key))).not.toBe(ownerBefore);
    });
  });

  describe("If-Match on writes", () => {
    it("PATCH with the current ETag changes the row; with a stale one it is 412 and nothing changes", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      const current = await etagOf(url);
      const patched = await call(
        "PATCH",
        url,
        { ...maxVersion, "if-match": current, prefer: "return=representation" },
        { note: "first" },
      );
      expect(patched.statusCode, patched.body).toBe(200);
      // The answer carries the new ETag, in its body and its header.
      expect(patched.headers.etag).toMatch(WEAK);
      expect(patched.headers.etag).not.toBe(current);
      expect(body(patched)["@odata.etag"]).toBe(patched.headers.etag);
      const stale = await call("PATCH", url, { ...maxVersion, "if-match": current }, { note: "second" });
      expect(stale.statusCode, stale.body).toBe(412);
      expect((body(stale).error as Row).code).toBe("PRECONDITION_FAILED");
      expect((await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } })).note).toBe(
        "first",
      );
      const starred = await call("PATCH", url, { ...maxVersion, "if-match": "*" }, { note: "third" });
      expect(starred.statusCode, starred.body).toBe(204);
      // One of several tags, weak or not, is enough.
      const now = (await etagOf(url)).replace(/^W\//, "");
      const listed = await call(
        "PATCH",
        url,
        { ...maxVersion, "if-match": `"nope", ${now}` },
        { note: "fourth" },
      );
      expect(listed.statusCode, listed.body).toBe(204);
    });

    it("a 204 to PATCH and PUT carries the new ETag: updating twice with it works, the stale one is 412", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      const first = await call(
        "PATCH",
        url,
        { ...maxVersion, "if-match": await etagOf(url) },
        { note: "one" },
      );
      expect(first.statusCode, first.body).toBe(204);
      expect(first.headers.etag).toMatch(WEAK);
      expect(first.headers.etag).toBe(await etagOf(url));
      const second = await call(
        "PUT",
        url,
        { ...maxVersion, "if-match": first.headers.etag as string },
        { belongs_to__application__id: world.fleet.id, note: "two" },
      );
      expect(second.statusCode, second.body).toBe(204);
      expect(second.headers.etag).toBe(await etagOf(url));
      expect(second.headers.etag).not.toBe(first.headers.etag);
      const stale = await call(
        "PATCH",
        url,
        { ...maxVersion, "if-match": first.headers.etag as string },
        { note: "x" },
      );
      expect(stale.statusCode, stale.body).toBe(412);
      // pinejs's answer stays as it was: no ETag.
      const pinejs = await call("PATCH", url, {}, { note: "three" });
      expect(pinejs.headers.etag).toBeUndefined();
    });

    it("a 204 carries no ETag when the write takes the entity out of the caller's sight", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      // A bulk PATCH names no entity: no ETag either.
      const bulk = await call("PATCH", `/v6/device?$filter=id eq ${device.id}`, maxVersion, { note: "bulk" });
      expect(bulk.statusCode, bulk.body).toBe(204);
      expect(bulk.headers.etag).toBeUndefined();
      expect((await call("GET", url, maxVersion)).statusCode).toBe(200);
    });

    it("PUT and DELETE with a stale ETag are 412; DELETE with the current one deletes", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      const before = await etagOf(url);
      await server.test.db.prisma.device.update({ where: { id: device.id }, data: { note: "moved on" } });
      const put = await call(
        "PUT",
        url,
        { ...maxVersion, "if-match": before },
        { belongs_to__application__id: world.fleet.id },
      );
      expect(put.statusCode, put.body).toBe(412);
      expect((await call("DELETE", url, { ...maxVersion, "if-match": before })).statusCode).toBe(412);
      const deleted = await call("DELETE", url, { ...maxVersion, "if-match": await etagOf(url) });
      expect(deleted.statusCode, deleted.body).toBe(204);
      expect(await server.test.db.prisma.device.findUnique({ where: { id: device.id } })).toBeNull();
    });

    it("a pinejs caller that sends If-Match is held to it too; a bulk write refuses it", async () => {
      const device = await world.w.device(world.fleet);
      const url = `/v6/device(${device.id})`;
      const stale = await call("PATCH", url, { "if-match": 'W/"0"' }, { note: "x" });
      expect(stale.statusCode, stale.body).toBe(412);
      expect(JSON.parse(stale.body)).toMatch(/ETag does not match/);
      const bulk = await call(
        "PATCH",
        `/v6/device?$filter=id eq ${device.id}`,
        { ...maxVersion, "if-match": "*" },
        { note: "x" },
      );
      expect(bulk.statusCode, bulk.body).toBe(400);
    });

    it("a condition no write honours is 400, never ignored: If-Match on a POST, If-None-Match on a write", async () => {
      const created = await call(
        "POST",
        "/v6/device",
        { ...maxVersion, "if-match": "*" },
        { belongs_to__application__id: world.fleet.id, device_name: "etag-never" },
      );
      expect(created.statusCode, created.body).toBe(400);
      const device = await world.w.device(world.fleet);
      const patched = await call(
        "PATCH",
        `/v6/device(${device.id})`,
        { ...maxVersion, "if-none-match": "*" },
        {
          note: "x",
        },
      );
      expect(patched.statusCode, patched.body).toBe(400);
      expect(await server.test.db.prisma.device.count({ where: { device_name: "etag-never" } })).toBe(0);
      expect(
        (await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } })).note,
      ).toBeNull();
    });

    it("a row the caller cannot see is 412 with If-Match, as for a row that is gone", async () => {
      const device = await world.w.device(world.fleet);
      const stranger = await createUser(server.test.db, buildModel(), {
        username: "etag-stranger",
        email: "etag-stranger@example.com",
        password: "etag-stranger-password",
        isAdmin: false,
      });
      const user = await server.test.db.prisma.user.findUniqueOrThrow({ where: { id: stranger } });
      const key = await createApiKey(server.test.db, { actor: user.actor, name: "etag-stranger" });
      const response = await call(
        "PATCH",
        `/v6/device(${device.id})`,
        { ...maxVersion, authorization: `Bearer ${key}`, "if-match": "*" },
        { note: "x" },
      );
      expect(response.statusCode, response.body).toBe(412);
      expect(
        (await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } })).note,
      ).toBeNull();
    });
  });
});
