import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { asc } from "@sap-cloud-sdk/odata-v4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Two clients generated from the live `/odata/$metadata` by two different generators (issue 47 item
// 2), each used as its documentation shows, with no header of OData's: odata2ts (its fetch client)
// and the SAP Cloud SDK's OData v4 generator. Each runs a full cycle: list with a filter, an
// expansion and a count, a count alone, get by key, create, update twice with If-Match (the second
// with the ETag of the first's 204), a stale update refused with 412, delete, and a batch (the SAP
// client's multipart/mixed one; odata2ts has none, so its fetch client posts a JSON batch). The code
// is generated in beforeAll into a directory of its own and removed after: nothing generated is
// committed, so it cannot drift from the server's $metadata.

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const bin = (name: string) => join(root, "node_modules", ".bin", name);
// Inside the project, so that the generated code finds the runtime packages in node_modules.
const generatedRoot = join(root, ".generated");

/** Fetches the live $metadata (no credential, no header) and writes it where the generators read it. */
async function liveMetadata(server: TestServer, dir: string): Promise<string> {
  const response = await fetch(`${server.url}/odata/$metadata`);
  expect(response.status).toBe(200);
  const file = join(dir, "fleetgate.edmx");
  await writeFile(file, await response.text());
  return file;
}

describe.each(databaseKinds)("clients generated from /odata/$metadata on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  let dir = "";
  let fleetDevices: number[] = [];

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await basicWorld(server.test.db, `gen${kind}`);
    for (let i = 0; i < 3; i++) await world.w.device(world.fleet);
    fleetDevices = (
      await server.test.db.prisma.device.findMany({
        where: { belongs_to__application: world.fleet.id },
        orderBy: { id: "asc" },
      })
    ).map((device) => device.id);
    dir = join(generatedRoot, `${kind}-${randomUUID()}`);
    await mkdir(dir, { recursive: true });
    const metadata = await liveMetadata(server, dir);
    // odata2ts reads the compiler options of the project it writes into; so does the transform of
    // the generated code in this test (not the repository's verbatimModuleSyntax).
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "Bundler" },
      }),
    );
    // Both generators in parallel: each is a few seconds of TypeScript work.
    await Promise.all([
      run(
        process.execPath,
        [bin("odata2ts"), "-s", metadata, "-o", join(dir, "odata2ts"), "-m", "service", "-e", "ts"],
        {
          cwd: dir,
        },
      ),
      run(
        process.execPath,
        [
          bin("generate-odata-client"),
          "--input",
          metadata,
          "--outputDir",
          join(dir, "sap"),
          "--optionsPerService",
          await sapOptions(dir, metadata),
          "--skipValidation",
        ],
        { cwd: dir },
      ),
    ]);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("odata2ts with its fetch client: the full cycle", async () => {
    const { FetchClient } = await import("@odata2ts/http-client-fetch");
    const generated = await import(pathToFileURL(join(dir, "odata2ts", "FleetgateService.ts")).href);
    const client = new FetchClient({ headers: { Authorization: `Bearer ${server.adminKey}` } });
    const api = new generated.FleetgateService(client, `${server.url}/odata`);

    const list = await api
      .device()
      .query((b: Builder, q: Record<string, Field>) =>
        b
          .select("id", "device_name")
          .filter(q.belongs_to__application__id.eq(world.fleet.id))
          .expand("belongs_to__application")
          .orderBy(q.id.asc())
          .count(),
      );
    expect(list.status).toBe(200);
    expect(list.data["@odata.count"]).toBe(fleetDevices.length);
    expect(list.data.value.map((device: { id: number }) => device.id)).toEqual(fleetDevices);
    expect(list.data.value[0].belongs_to__application).toMatchObject({ id: world.fleet.id });

    const created = await api
      .device()
      .create({ belongs_to__application__id: world.fleet.id, device_name: "o2t" });
    expect(created.status).toBe(201);
    const id = created.data.id as number;
    const one = await api.device(id).query();
    expect(one.data).toMatchObject({ id, device_name: "o2t" });
    const etag = one.data["@odata.etag"] as string;
    expect(etag).toMatch(/^W\//);
    expect(one.headers.etag).toBe(etag);

    const first = await api.device(id).patch({ note: "one" }, { headers: { "If-Match": etag } });
    expect(first.status).toBe(204);
    const second = await api
      .device(id)
      .patch({ note: "two" }, { headers: { "If-Match": first.headers.etag } });
    expect(second.status).toBe(204);
    const stale = await api
      .device(id)
      .patch({ note: "stale" }, { headers: { "If-Match": etag } })
      .catch((error: { status?: number }) => error);
    expect(stale.status).toBe(412);
    expect((await api.device(id).query()).data.note).toBe("two");

    const batch = await client.post<{ responses: { status: number }[] }>(`${server.url}/odata/$batch`, {
      requests: [
        { id: "1", method: "GET", url: `device(${id})?$select=id,note` },
        { id: "2", atomicityGroup: "g", method: "PATCH", url: `device(${id})`, body: { note: "batched" } },
      ],
    });
    expect(batch.data.responses.map((answer) => answer.status)).toEqual([200, 204]);

    const removed = await api.device(id).delete();
    expect(removed.status).toBe(204);
    const gone = await api
      .device(id)
      .query()
      .catch((error: { status?: number }) => error);
    expect(gone.status).toBe(404);
  });

  it("the SAP Cloud SDK's generated client: the full cycle, and a multipart batch", async () => {
    const generated = await import(pathToFileURL(join(dir, "sap", "fleetgate", "index.ts")).href);
    const { deviceApi, applicationApi, batch, changeset } = generated.fleetgate();
    const destination = { url: server.url, headers: { authorization: `Bearer ${server.adminKey}` } };
    const inFleet = deviceApi.schema.BELONGS_TO_APPLICATION_ID.equals(world.fleet.id);

    const list = await deviceApi
      .requestBuilder()
      .getAll()
      .select(deviceApi.schema.ID, deviceApi.schema.DEVICE_NAME)
      .filter(inFleet)
      .expand(
        deviceApi.schema.BELONGS_TO_APPLICATION.select(
          applicationApi.schema.ID,
          applicationApi.schema.APP_NAME,
        ),
      )
      .orderBy(asc(deviceApi.schema.ID))
      .execute(destination);
    expect(list.map((device: { id: number }) => device.id)).toEqual(fleetDevices);
    expect(list[0].belongsToApplication).toMatchObject({ id: world.fleet.id, appName: world.fleet.app_name });
    const count = await deviceApi.requestBuilder().getAll().filter(inFleet).count().execute(destination);
    expect(count).toBe(fleetDevices.length);

    const created = await deviceApi
      .requestBuilder()
      .create(deviceApi.entityBuilder().belongsToApplicationId(world.fleet.id).deviceName("sap").build())
      .execute(destination);
    const read = await deviceApi.requestBuilder().getByKey(created.id).execute(destination);
    expect(read).toMatchObject({ id: created.id, deviceName: "sap" });
    expect(read.versionIdentifier).toMatch(/^W\//);

    // The SDK sends the entity's ETag as If-Match and takes the new one from the 204's ETag.
    // (It updates the entity it was given in place, so the ETags are kept as strings.)
    const etags = [read.versionIdentifier];
    read.note = "one";
    const first = await deviceApi.requestBuilder().update(read).execute(destination);
    etags.push(first.versionIdentifier);
    first.note = "two";
    const second = await deviceApi.requestBuilder().update(first).execute(destination);
    etags.push(second.versionIdentifier);
    expect(new Set(etags).size).toBe(3);
    // The entity as read before the two updates: its ETag is stale.
    const stale = await deviceApi.requestBuilder().getByKey(created.id).execute(destination);
    stale.setVersionIdentifier(etags[0]);
    stale.note = "stale";
    const refused = await deviceApi
      .requestBuilder()
      .update(stale)
      .execute(destination)
      .catch((error: unknown) => error);
    expect(statusOf(refused), String(refused)).toBe(412);
    expect((await deviceApi.requestBuilder().getByKey(created.id).execute(destination)).note).toBe("two");

    const fresh = await deviceApi.requestBuilder().getByKey(created.id).execute(destination);
    fresh.note = "batched";
    const responses = await batch(
      deviceApi.requestBuilder().getByKey(fleetDevices[0]),
      changeset(
        deviceApi.requestBuilder().update(fresh),
        deviceApi
          .requestBuilder()
          .create(
            deviceApi.entityBuilder().belongsToApplicationId(world.fleet.id).deviceName("sap-batch").build(),
          ),
      ),
    ).execute(destination);
    expect(responses.map((response: { isSuccess(): boolean }) => response.isSuccess())).toEqual([true, true]);
    expect(responses[0].as(deviceApi)[0].id).toBe(fleetDevices[0]);
    const writes = responses[1].responses;
    expect(writes.map((write: { httpCode: number }) => write.httpCode)).toEqual([204, 201]);
    const batched = writes[1].as(deviceApi) as { id: number; deviceName: string };
    expect(batched.deviceName).toBe("sap-batch");
    expect((await deviceApi.requestBuilder().getByKey(created.id).execute(destination)).note).toBe("batched");

    for (const id of [created.id, batched.id]) {
      const entity = await deviceApi.requestBuilder().getByKey(id).execute(destination);
      await deviceApi.requestBuilder().delete(entity).execute(destination);
    }
    const left = await server.test.db.prisma.device.count({
      where: { id: { in: [created.id, batched.id] } },
    });
    expect(left).toBe(0);
  });
});

// What this test uses of odata2ts's query builder and query objects (the generated types are
// imported at run time, so the test file cannot name them).
interface Builder {
  select(...names: string[]): Builder;
  filter(expression: unknown): Builder;
  expand(name: string): Builder;
  orderBy(expression: unknown): Builder;
  count(): Builder;
}
interface Field {
  eq(value: number): unknown;
  asc(): unknown;
}

/** The SAP generator's per-service options: the service's path, which an OData v4 $metadata does not carry. */
async function sapOptions(dir: string, metadata: string): Promise<string> {
  const file = join(dir, "options-per-service.json");
  // Keyed by the input's path relative to the working directory, the generator's own `dir`.
  const key = relative(dir, metadata);
  await writeFile(file, JSON.stringify({ [key]: { directoryName: "fleetgate", basePath: "/odata" } }));
  return file;
}

/** The HTTP status an SDK error carries, on it or on the error that caused it (SAP wraps axios's). */
function statusOf(error: unknown): number | undefined {
  const e = error as { status?: number; response?: { status?: number }; cause?: unknown } | undefined;
  if (e === undefined || e === null) return undefined;
  return e.response?.status ?? e.status ?? statusOf(e.cause);
}
