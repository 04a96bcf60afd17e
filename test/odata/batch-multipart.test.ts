import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld, World } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// $batch in OData 4.0's multipart/mixed form at /odata/$batch (issue 47 item 2): the same requests
// as the JSON batch (batch-json.test.ts), framed as MIME parts; a change set is one transaction,
// `$<Content-ID>` names what an earlier request of it created, a failed change set is rolled back and
// answered with its one error; framing a client got wrong is a 400 that says what is wrong.

interface Response {
  status: number;
  contentId?: string;
  headers: Record<string, string>;
  body: string;
}
type Item = Response | Response[];

const CRLF = "\r\n";

/** A request part of a batch: its MIME headers, request line, headers and JSON body. */
function part(method: string, url: string, options: { id?: string; body?: object; headers?: string[] } = {}) {
  return [
    "Content-Type: application/http",
    "Content-Transfer-Encoding: binary",
    ...(options.id ? [`Content-ID: ${options.id}`] : []),
    "",
    `${method} ${url} HTTP/1.1`,
    ...(options.body ? ["Content-Type: application/json"] : []),
    ...(options.headers ?? []),
    "",
    options.body ? JSON.stringify(options.body) : "",
  ].join(CRLF);
}

const multipart = (boundary: string, parts: string[]) =>
  `${parts.map((p) => `--${boundary}${CRLF}${p}${CRLF}`).join("")}--${boundary}--${CRLF}`;

const changeSet = (boundary: string, parts: string[]) =>
  `Content-Type: multipart/mixed; boundary=${boundary}${CRLF}${CRLF}${multipart(boundary, parts)}`;

/** The test's own reading of a multipart answer, independent of the server's parser. */
function readMultipart(body: string, contentType: string): Item[] {
  const boundary = /boundary=([^;]+)/.exec(contentType)?.[1] as string;
  const pieces = body.split(`--${boundary}`);
  expect(pieces.at(-1)?.trim()).toBe("--");
  return pieces.slice(1, -1).map((piece): Item => {
    const text = piece.replace(/^\r\n/, "").replace(/\r\n$/, "");
    const [head = "", ...rest] = text.split(CRLF + CRLF);
    const mime = headerRecord(head.split(CRLF));
    if (mime["content-type"]?.startsWith("multipart/mixed"))
      return readMultipart(rest.join(CRLF + CRLF), mime["content-type"]) as Response[];
    expect(mime["content-transfer-encoding"]).toBe("binary");
    const [statusAndHeaders = "", ...bodyParts] = rest;
    const [statusLine = "", ...headerLines] = statusAndHeaders.split(CRLF);
    return {
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]),
      ...(mime["content-id"] ? { contentId: mime["content-id"] } : {}),
      headers: headerRecord(headerLines),
      body: bodyParts.join(CRLF + CRLF),
    };
  });
}

const headerRecord = (lines: string[]) =>
  Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(":")).toLowerCase(),
      line.slice(line.indexOf(":") + 1).trim(),
    ]),
  );

describe.each(databaseKinds)("multipart $batch on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  let member = "";
  let theirs: { id: number };

  beforeAll(async () => {
    server = await startTestServer(kind, { ODATA_BATCH_MAX_PARTS: "6", ODATA_BATCH_MAX_BYTES: "8192" });
    world = await basicWorld(server.test.db, "mpbatch");
    const db = server.test.db;
    const id = await createUser(db, buildModel(), {
      username: "mp-member",
      email: "mp-member@example.com",
      password: "mp-member-password",
      isAdmin: false,
    });
    await db.prisma.organizationMembership.create({
      data: { user: id, is_member_of__organization: world.org.id },
    });
    const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
    member = await createApiKey(db, { actor: user.actor, name: "mp-member" });
    const w = new World(db, "mpelsewhere");
    theirs = await w.device(await w.fleet(await w.organization(), world.dtA));
  });
  afterAll(() => server.close());

  const send = async (body: string, boundary = "batch_1", key?: string) => {
    const response = await server.app.inject({
      method: "POST",
      url: "/odata/$batch",
      headers: {
        "content-type": `multipart/mixed; boundary=${boundary}`,
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      payload: body,
    });
    const type = String(response.headers["content-type"]);
    return {
      status: response.statusCode,
      type,
      items: type.startsWith("multipart/mixed") ? readMultipart(response.body, type) : [],
      error: type.startsWith("application/json")
        ? (JSON.parse(response.body) as { error: { code: string; message: string } }).error
        : undefined,
    };
  };
  const fleetDevices = () =>
    server.test.db.prisma.device.findMany({ where: { belongs_to__application: world.fleet.id } });

  it("answers a read and a change set: creates, follows $1, updates with If-Match, each with its status", async () => {
    const device = await world.w.device(world.fleet);
    const read = await send(multipart("batch_1", [part("GET", `device(${device.id})?$select=id,note`)]));
    expect(read.status).toBe(200);
    const [first] = read.items as [Response];
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ id: device.id, note: null });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\//);

    const { status, items } = await send(
      multipart("batch_1", [
        part("GET", `/odata/device/$count?$filter=belongs_to__application__id%20eq%20${world.fleet.id}`),
        changeSet("changeset_a", [
          part("POST", "device", {
            id: "1",
            body: { belongs_to__application__id: world.fleet.id, device_name: "mp-1" },
          }),
          part("PATCH", "$1", { id: "2", body: { note: "via reference" } }),
          part("PATCH", `device(${device.id})`, {
            id: "3",
            body: { note: "one" },
            headers: [`If-Match: ${etag}`],
          }),
        ]),
        part("PATCH", `device(${device.id})`, { body: { note: "stale" }, headers: [`If-Match: ${etag}`] }),
      ]),
    );
    expect(status).toBe(200);
    const [count, set, stale] = items as [Response, Response[], Response];
    expect(Array.isArray(set), JSON.stringify(set)).toBe(true);
    expect(count.status).toBe(200);
    expect(set.map((answer) => [answer.contentId, answer.status])).toEqual([
      ["1", 201],
      ["2", 204],
      ["3", 204],
    ]);
    const created = JSON.parse((set[0] as Response).body) as { id: number };
    expect(set[0]?.headers.location).toBe(`/odata/device(${created.id})`);
    expect(set[2]?.headers.etag).toMatch(/^W\//);
    expect(set[2]?.headers.etag).not.toBe(etag);
    expect(stale.status).toBe(412);
    const row = await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({ device_name: "mp-1", note: "via reference" });
    expect((await server.test.db.prisma.device.findUniqueOrThrow({ where: { id: device.id } })).note).toBe(
      "one",
    );
  });

  it("a change set that fails is rolled back and answered with the failed request's error alone", async () => {
    const before = (await fleetDevices()).length;
    const { status, items } = await send(
      multipart("batch_1", [
        changeSet("cs", [
          part("POST", "device", { id: "a", body: { belongs_to__application__id: world.fleet.id } }),
          part("POST", "device", {
            id: "b",
            body: { belongs_to__application__id: world.fleet.id, nothing: 1 },
          }),
        ]),
        part("GET", "device?$top=1&$select=id"),
      ]),
    );
    expect(status).toBe(200);
    const [failed, after] = items as [Response, Response];
    expect(Array.isArray(failed)).toBe(false);
    expect(failed).toMatchObject({ status: 400, contentId: "b" });
    expect(JSON.parse(failed.body).error.message).toMatch(/nothing/);
    expect(after.status).toBe(200);
    expect((await fleetDevices()).length).toBe(before);
  });

  it("each request runs with the caller's rights, as it would alone", async () => {
    const alone = async (method: string, url: string, payload?: object) => {
      const response = await server.app.inject({
        method: method as "GET",
        url: `/odata/${url}`,
        headers: { authorization: `Bearer ${member}` },
        ...(payload ? { payload } : {}),
      });
      return { status: response.statusCode, body: response.body };
    };
    const requests: [string, string, object?][] = [
      ["GET", `device(${theirs.id})`],
      ["PATCH", `device(${theirs.id})`, { note: "x" }],
      ["DELETE", `device(${theirs.id})`],
    ];
    const { items } = await send(
      multipart(
        "b",
        requests.map(([method, url, body]) => part(method, url, body ? { body } : {})),
      ),
      "b",
      member,
    );
    for (const [i, [method, url, body]] of requests.entries()) {
      const answer = items[i] as Response;
      expect({ status: answer.status, body: answer.body }, `${method} ${url}`).toEqual(
        await alone(method, url, body),
      );
    }
    expect(await server.test.db.prisma.device.findUnique({ where: { id: theirs.id } })).not.toBeNull();
  });

  it("bad framing is a 400 that says what is wrong, and runs nothing", async () => {
    const before = (await fleetDevices()).length;
    const post = part("POST", "device", { body: { belongs_to__application__id: world.fleet.id } });
    const cases: [string, string, string, RegExp][] = [
      ["no boundary", multipart("b", [post]), "", /needs a boundary/],
      ["no closing delimiter", `--b${CRLF}${post}${CRLF}`, "b", /no closing delimiter --b--/],
      ["no part", `--b--${CRLF}`, "b", /no part/],
      [
        "another part type",
        multipart("b", [post.replace("application/http", "application/json")]),
        "b",
        /Batch part 1: its Content-Type must be application\/http/,
      ],
      [
        "no transfer encoding",
        multipart("b", [post.replace("Content-Transfer-Encoding: binary\r\n", "")]),
        "b",
        /Content-Transfer-Encoding must be binary/,
      ],
      ["a bad request line", multipart("b", [post.replace(" HTTP/1.1", "")]), "b", /is not a request line/],
      ["a body that is not JSON", multipart("b", [`${post}}`]), "b", /its body is not JSON/],
      [
        "a GET in a change set",
        multipart("b", [changeSet("c", [post, part("GET", "device")])]),
        "b",
        /change set request 2: a change set holds no GET/,
      ],
      [
        "a reference outside its change set",
        multipart("b", [
          changeSet("c", [part("POST", "device", { id: "1", body: {} })]),
          part("PATCH", "$1", { body: {} }),
        ]),
        "b",
        /'\$1' names no earlier request of its change set/,
      ],
      [
        "a Content-ID used twice",
        multipart("b", [
          changeSet("c", [
            part("POST", "device", { id: "1", body: {} }),
            part("POST", "device", { id: "1", body: {} }),
          ]),
        ]),
        "b",
        /Content-ID '1' is empty or not unique/,
      ],
      [
        "too many requests",
        multipart(
          "b",
          Array.from({ length: 7 }, () => post),
        ),
        "b",
        /ODATA_BATCH_MAX_PARTS/,
      ],
    ];
    for (const [what, body, boundary, message] of cases) {
      const response = await server.app.inject({
        method: "POST",
        url: "/odata/$batch",
        headers: { "content-type": boundary ? `multipart/mixed; boundary=${boundary}` : "multipart/mixed" },
        payload: body,
      });
      expect(response.statusCode, what).toBe(400);
      const error = (JSON.parse(response.body) as { error: { code: string; message: string } }).error;
      expect(error.message, what).toMatch(message);
    }
    const large = await send(
      multipart("b", [part("POST", "device", { body: { note: "x".repeat(9000) } })]),
      "b",
    );
    expect(large.status).toBe(413);
    expect((await fleetDevices()).length).toBe(before);
  });

  it("$metadata says both forms are supported, and references only within a change set", async () => {
    const metadata = (await server.app.inject({ method: "GET", url: "/odata/$metadata" })).body;
    expect(metadata).toContain(
      '<PropertyValue Property="SupportedFormats"><Collection><String>application/json</String><String>multipart/mixed</String></Collection></PropertyValue>',
    );
    expect(metadata).toContain(
      '<PropertyValue Property="ReferencesAcrossChangeSetsSupported" Bool="false"/>',
    );
  });
});
