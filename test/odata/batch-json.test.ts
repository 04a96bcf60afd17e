import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld, World } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// $batch in OData 4.01's JSON form at /odata/$batch (issue 47 item 2, issue 45 item 6): requests in
// order, each atomicity group one transaction through the write core, per-request statuses; every
// request with the caller's rights and limits; the batch bounded; a failure tells no more than the
// same request alone would.

type Row = Record<string, unknown>;

// Two reads of `application?$expand=owns__device($expand=device_tag)` (1,001,001,000 each: 1,000
// fleets, a million devices, a billion tags as ODATA_MAX_COST counts them) fit, a third does not.
const WIDE_READ = 1_001_001_000;
const BATCH_COST = 2_500_000_000;
interface Answer {
  id: string;
  status: number;
  headers: Record<string, string>;
  body?: Row & { error?: { code: string; message: string }; value?: Row[] };
}

describe.each(databaseKinds)("JSON $batch on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  let member = "";
  let theirs: { device: { id: number } };

  async function userKey(username: string, organization: number): Promise<string> {
    const db = server.test.db;
    const id = await createUser(db, buildModel(), {
      username,
      email: `${username}@example.com`,
      password: `${username}-password`,
      isAdmin: false,
    });
    await db.prisma.organizationMembership.create({
      data: { user: id, is_member_of__organization: organization },
    });
    const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
    return createApiKey(db, { actor: user.actor, name: username });
  }

  beforeAll(async () => {
    server = await startTestServer(kind, {
      ODATA_BATCH_MAX_PARTS: "6",
      ODATA_BATCH_MAX_BYTES: "8192",
      ODATA_BATCH_MAX_COST: String(BATCH_COST),
    });
    world = await basicWorld(server.test.db, "batch");
    member = await userKey("batch-member", world.org.id);
    const w = new World(server.test.db, "batchelsewhere");
    const org = await w.organization();
    theirs = { device: await w.device(await w.fleet(org, world.dtA)) };
  });
  afterAll(() => server.close());

  const batch = async (requests: unknown[], key?: string) => {
    const response = await server.app.inject({
      method: "POST",
      url: "/odata/$batch",
      headers: key ? { authorization: `Bearer ${key}` } : {},
      payload: { requests },
    });
    return { status: response.statusCode, body: JSON.parse(response.body) as { responses: Answer[] } & Row };
  };
  const fleetDevices = () =>
    server.test.db.prisma.device.findMany({ where: { belongs_to__application: world.fleet.id } });

  it("reads, creates and updates twice with If-Match in one batch, each with its own status", async () => {
    const device = await world.w.device(world.fleet);
    const { status, body } = await batch([
      { id: "r", method: "GET", url: `device(${device.id})?$select=id,note` },
      {
        id: "c",
        method: "POST",
        url: "device",
        body: { belongs_to__application__id: world.fleet.id, device_name: "in-batch" },
      },
      {
        id: "n",
        method: "GET",
        url: `/odata/device/$count?$filter=belongs_to__application__id eq ${world.fleet.id}`,
      },
    ]);
    expect(status).toBe(200);
    const [read, created, count] = body.responses as [Answer, Answer, Answer];
    expect(read).toMatchObject({ id: "r", status: 200, body: { id: device.id, note: null } });
    expect(read.headers.etag).toMatch(/^W\//);
    expect(created).toMatchObject({ id: "c", status: 201, body: { device_name: "in-batch" } });
    expect(created.headers.location).toMatch(/^\/odata\/device\(\d+\)$/);
    expect(count).toMatchObject({ id: "n", status: 200, body: String((await fleetDevices()).length) });
    const etag = read.headers.etag as string;
    const updates = await batch([
      {
        id: "1",
        method: "PATCH",
        url: `device(${device.id})`,
        headers: { "If-Match": etag },
        body: { note: "one" },
      },
    ]);
    const first = updates.body.responses[0] as Answer;
    expect(first.status).toBe(204);
    const again = await batch([
      {
        id: "2",
        method: "PATCH",
        url: `device(${device.id})`,
        headers: { "If-Match": first.headers.etag },
        body: { note: "two" },
      },
      {
        id: "3",
        method: "PATCH",
        url: `device(${device.id})`,
        headers: { "If-Match": etag },
        body: { note: "stale" },
      },
    ]);
    expect(again.body.responses.map((answer) => answer.status)).toEqual([204, 412]);
    expect((await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } })).note).toBe(
      "two",
    );
  });

  it("an atomicity group is one transaction: one failure rolls back all of it; a dependant is 424", async () => {
    const before = (await fleetDevices()).length;
    const { body } = await batch([
      {
        id: "a",
        atomicityGroup: "g",
        method: "POST",
        url: "device",
        body: { belongs_to__application__id: world.fleet.id, device_name: "g-1" },
      },
      {
        id: "b",
        atomicityGroup: "g",
        method: "POST",
        url: "device",
        body: { belongs_to__application__id: world.fleet.id, nothing: 1 },
      },
      { id: "c", method: "GET", url: "device?$top=1&$select=id", dependsOn: ["g"] },
      { id: "d", method: "GET", url: "device?$top=1&$select=id" },
    ]);
    expect(body.responses.map((answer) => [answer.id, answer.status])).toEqual([
      ["a", 424],
      ["b", 400],
      ["c", 424],
      ["d", 200],
    ]);
    expect((body.responses[1] as Answer).body?.error?.message).toMatch(/nothing/);
    expect((await fleetDevices()).length).toBe(before);
    // The same group with valid bodies commits both.
    const ok = await batch([
      {
        id: "a",
        atomicityGroup: "g",
        method: "POST",
        url: "device",
        body: { belongs_to__application__id: world.fleet.id, device_name: "g-1" },
      },
      {
        id: "b",
        atomicityGroup: "g",
        method: "POST",
        url: "device",
        body: { belongs_to__application__id: world.fleet.id, device_name: "g-2" },
      },
    ]);
    expect(ok.body.responses.map((answer) => answer.status)).toEqual([201, 201]);
    expect((await fleetDevices()).length).toBe(before + 2);
  });

  it("a request names an earlier one's entity by `$<id>`: of its atomicity group, or one it depends on", async () => {
    const create = { method: "POST", url: "device" };
    const { status, body } = await batch([
      {
        id: "a",
        atomicityGroup: "g",
        ...create,
        body: { belongs_to__application__id: world.fleet.id, device_name: "referenced" },
      },
      { id: "b", atomicityGroup: "g", method: "PATCH", url: "$a", body: { note: "set through $a" } },
      { id: "c", method: "GET", url: "$a?$select=device_name,note", dependsOn: ["a"] },
    ]);
    expect(status).toBe(200);
    expect(body.responses.map((answer) => [answer.id, answer.status])).toEqual([
      ["a", 201],
      ["b", 204],
      ["c", 200],
    ]);
    expect((body.responses[2] as Answer).body).toMatchObject({
      device_name: "referenced",
      note: "set through $a",
    });
    // A reference to a request neither in its group nor depended on: the batch is malformed.
    const loose = await batch([
      { id: "a", ...create, body: { belongs_to__application__id: world.fleet.id } },
      { id: "b", method: "GET", url: "$a" },
    ]);
    expect(loose.status).toBe(400);
    expect(JSON.stringify(loose.body)).toMatch(/'\$a' names no earlier request/);
    // A reference to a request that created nothing (a read) is that request's 400.
    const nothing = await batch([
      { id: "r", method: "GET", url: "device?$top=1&$select=id" },
      { id: "x", method: "PATCH", url: "$r", body: { note: "?" }, dependsOn: ["r"] },
    ]);
    expect(nothing.body.responses.map((answer) => answer.status)).toEqual([200, 400]);
    // A group whose reference fails rolls back what it created.
    const before = (await fleetDevices()).length;
    const rolled = await batch([
      { id: "a", atomicityGroup: "h", ...create, body: { belongs_to__application__id: world.fleet.id } },
      { id: "b", atomicityGroup: "h", method: "PATCH", url: "$a", body: { nothing: 1 } },
    ]);
    expect(rolled.body.responses.map((answer) => answer.status)).toEqual([424, 400]);
    expect((await fleetDevices()).length).toBe(before);
  });

  it("each request runs with the caller's rights: another tenant's row answers as it would alone", async () => {
    const mine = await world.w.device(world.fleet);
    const alone = async (method: string, url: string, payload?: object) => {
      const response = await server.app.inject({
        method: method as "GET",
        url: `/odata/${url}`,
        headers: { authorization: `Bearer ${member}` },
        ...(payload ? { payload } : {}),
      });
      return { status: response.statusCode, body: JSON.parse(response.body || "null") as unknown };
    };
    const requests = [
      { id: "1", method: "GET", url: `device(${theirs.device.id})` },
      { id: "2", method: "PATCH", url: `device(${theirs.device.id})`, body: { note: "x" } },
      { id: "3", method: "GET", url: `device?$filter=id eq ${theirs.device.id}` },
      { id: "4", method: "DELETE", url: `device(${theirs.device.id})` },
      { id: "5", method: "GET", url: `device(${mine.id})?$select=id` },
    ];
    const { body } = await batch(requests, member);
    for (const [i, request] of requests.entries()) {
      const answer = body.responses[i] as Answer;
      const single = await alone(request.method, request.url, request.body);
      expect({ status: answer.status, body: answer.body ?? null }, request.id).toEqual(single);
    }
    expect((body.responses[4] as Answer).status).toBe(200);
    expect(await server.test.db.prisma.device.findUnique({ where: { id: theirs.device.id } })).not.toBeNull();
    // Without a credential a batch reads what is public and writes nothing.
    const anonymous = await server.app.inject({
      method: "POST",
      url: "/odata/$batch",
      headers: { authorization: "" },
      payload: { requests: [{ id: "w", method: "PATCH", url: `device(${mine.id})`, body: { note: "x" } }] },
    });
    expect((JSON.parse(anonymous.body) as { responses: Answer[] }).responses[0]?.status).toBe(401);
  });

  it("a batch is bounded: parts, body size; a malformed batch runs nothing", async () => {
    const before = (await fleetDevices()).length;
    const post = { method: "POST", url: "device", body: { belongs_to__application__id: world.fleet.id } };
    const many = await batch(Array.from({ length: 7 }, (_, i) => ({ id: String(i), ...post })));
    expect(many.status).toBe(400);
    expect(JSON.stringify(many.body)).toMatch(/ODATA_BATCH_MAX_PARTS/);
    const large = await batch([{ id: "1", ...post, body: { ...post.body, note: "x".repeat(9000) } }]);
    expect(large.status).toBe(413);
    const duplicate = await batch([
      { id: "1", ...post },
      { id: "1", ...post },
    ]);
    expect(duplicate.status).toBe(400);
    const forward = await batch([
      { id: "1", ...post, dependsOn: ["2"] },
      { id: "2", ...post },
    ]);
    expect(forward.status).toBe(400);
    const elsewhere = await batch([{ id: "1", method: "GET", url: "/v6/device" }]);
    expect(elsewhere.status).toBe(200);
    expect((elsewhere.body.responses[0] as Answer).status).toBe(400);
    expect((await fleetDevices()).length).toBe(before);
  });

  it("the batch's reads together are bounded (ODATA_BATCH_MAX_COST): the read over it and every later read are refused", async () => {
    const wide = { method: "GET", url: "application?$expand=owns__device($expand=device_tag)" };
    const before = (await fleetDevices()).length;
    const { status, body } = await batch([
      { id: "1", ...wide },
      { id: "2", ...wide },
      { id: "3", ...wide },
      { id: "4", method: "GET", url: `device/$count` },
      { id: "5", method: "POST", url: "device", body: { belongs_to__application__id: world.fleet.id } },
      { id: "6", method: "GET", url: "device?$top=1&$select=id", dependsOn: ["3"] },
    ]);
    expect(status).toBe(200);
    expect(body.responses.map((answer) => answer.status)).toEqual([200, 200, 400, 400, 201, 424]);
    const [over, later] = body.responses.slice(2) as [Answer, Answer];
    expect(over.body?.error?.message).toBe(
      `The reads of this batch could produce more than ${BATCH_COST} rows together (ODATA_BATCH_MAX_COST): this read (up to ${WIDE_READ} rows) and every read after it in the batch are not run; the reads before it could produce up to ${2 * WIDE_READ}`,
    );
    expect(later.body?.error?.message).toMatch(/ODATA_BATCH_MAX_COST/);
    // Writes are not charged: the POST after the refusal still ran.
    expect((await fleetDevices()).length).toBe(before + 1);
    // Each read alone is within its own limit, and a new batch has a budget of its own.
    const again = await batch([{ id: "1", ...wide }]);
    expect(again.body.responses[0]?.status).toBe(200);
  });
});
