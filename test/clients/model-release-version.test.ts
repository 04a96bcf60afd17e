import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Exchange, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: balena's release versioning as balena-sdk 19.7.3 reads it: raw_version (release.get
// by {application, rawVersion} filters on it), the semver parts, variant, revision and
// known_issue_list (release.setKnownIssueList writes it).

type Row = Record<string, unknown>;

const versionFields =
  "semver,semver_major,semver_minor,semver_patch,semver_prerelease,semver_build,variant,revision,is_final,raw_version";

describe.each(databaseKinds)("release versions on %s", (kind) => {
  let world: ClientsWorld;
  let fleet: number;
  let commits = 0;
  const ids: Record<string, number> = {};

  const get = async (url: string) => {
    const reply = await world.send("GET", url);
    expectStatus(reply, 200, `GET ${url}`);
    expect(reply.headers["x-sql-statements"], url).toBe("1");
    return (reply.body as { d: Row[] }).d;
  };
  const version = async (name: string) =>
    (await get(`/v6/release(${ids[name]})?$select=${versionFields}`))[0];
  const release = (body: Row) =>
    world.release(fleet, { commit: `c${++commits}`, status: "success", ...body });

  beforeAll(async () => {
    world = await clientsWorld(kind);
    fleet = await world.fleet("versions", "raspberrypi4-64");
    ids.first = await release({});
    ids.second = await release({});
    ids.beta = await release({ semver: "2.1.0-beta.1+build.5", variant: "prod" });
    ids.betaAgain = await release({ semver: "v2.1.0-beta.1", variant: "prod" });
    ids.draft = await release({ semver: "3.0.0", is_final: false });
  });
  afterAll(() => world?.close());

  it("numbers a fleet's final releases per version and variant, and reads balena's raw_version", async () => {
    expect(await version("first")).toEqual({
      semver: "0.0.0",
      semver_major: 0,
      semver_minor: 0,
      semver_patch: 0,
      semver_prerelease: "",
      semver_build: "",
      variant: "",
      revision: 0,
      is_final: true,
      raw_version: "0.0.0",
    });
    expect(await version("second")).toMatchObject({ revision: 1, raw_version: "0.0.0+rev1" });
    expect(await version("beta")).toEqual({
      semver: "2.1.0-beta.1+build.5",
      semver_major: 2,
      semver_minor: 1,
      semver_patch: 0,
      semver_prerelease: "beta.1",
      semver_build: "build.5",
      variant: "prod",
      revision: 0,
      is_final: true,
      raw_version: "2.1.0-beta.1+build.5.prod",
    });
    // The build metadata is no part of the version: the same version again is revision 1.
    expect(await version("betaAgain")).toMatchObject({
      semver_major: 2,
      semver_prerelease: "beta.1",
      semver_build: "",
      revision: 1,
      raw_version: "2.1.0-beta.1+rev1.prod",
    });
  });

  it("a draft has no revision and its creation time in its raw_version until it is final", async () => {
    const [draft] = await get(`/v6/release(${ids.draft})?$select=created_at,revision,raw_version`);
    expect(draft).toEqual({
      created_at: draft?.created_at,
      revision: null,
      raw_version: `3.0.0-${Date.parse(String(draft?.created_at))}`,
    });
    expectStatus(await world.send("PATCH", `/v6/release(${ids.draft})`, { is_final: true }), 200);
    expect(await version("draft")).toMatchObject({ is_final: true, revision: 0, raw_version: "3.0.0" });
    // A new version (or variant) is numbered again in it; made a draft again, a release loses its number.
    expectStatus(await world.send("PATCH", `/v6/release(${ids.draft})`, { semver: "0.0.0" }), 200);
    expect(await version("draft")).toMatchObject({ revision: 2, raw_version: "0.0.0+rev2" });
    expectStatus(await world.send("PATCH", `/v6/release(${ids.draft})`, { is_final: false }), 200);
    expect(await version("draft")).toMatchObject({ revision: null });
    expectStatus(
      await world.send("PATCH", `/v6/release(${ids.draft})`, { is_final: true, semver: "3.0.0" }),
      200,
    );
    expect(await version("draft")).toMatchObject({ revision: 0, raw_version: "3.0.0" });
  });

  it("reads any stored semver without failing: one that is not a version reads as 0.0.0", async () => {
    const odd = await release({ semver: "banana" });
    const huge = await release({ semver: "99999999999.0.0", variant: "dev" });
    const rows = await get(
      `/v6/release?$select=id,semver_major,semver_prerelease,raw_version&$filter=id in (${odd}, ${huge})&$orderby=id asc`,
    );
    expect(rows).toEqual([
      { id: odd, semver_major: 0, semver_prerelease: "", raw_version: "0.0.0+rev2" },
      { id: huge, semver_major: 0, semver_prerelease: "", raw_version: "0.0.0+dev" },
    ]);
  });

  it("filters and orders by the computed parts, and lists them by default", async () => {
    const rows = await get(
      `/v6/release?$select=id&$filter=belongs_to__application eq ${fleet} and semver_major eq 2 and semver_prerelease eq 'beta.1' and startswith(raw_version,'2.1.0')&$orderby=raw_version desc`,
    );
    expect(rows).toEqual([{ id: ids.betaAgain }, { id: ids.beta }]);
    const [all] = await get(`/v6/release(${ids.beta})`);
    for (const field of versionFields.split(",")) expect(all, field).toHaveProperty(field);
    expect(all).toHaveProperty("known_issue_list", null);
    const [v5] = await get(`/v5/release(${ids.beta})?$select=raw_version,semver_minor`);
    expect(v5).toEqual({ raw_version: "2.1.0-beta.1+build.5.prod", semver_minor: 1 });
    const computed = await world.send("PATCH", `/v6/release(${ids.beta})`, { raw_version: "9.9.9" });
    expect(computed.status, computed.raw).toBe(400);
  });

  it("balena-sdk: release.get({application, rawVersion}) and setKnownIssueList", async () => {
    const { sdk, log } = loggedSdk(world.server.url);
    await sdk.auth.loginWithToken(world.server.adminKey);
    const requests = (from: number) =>
      log.slice(from).map((exchange: Exchange) => exchange.request.replace(world.server.url, ""));
    const from = log.length;
    const found = await sdk.models.release.get(
      { application: fleet, rawVersion: "0.0.0+rev1" },
      { $select: ["id", "raw_version"] },
    );
    expect(found).toEqual({ id: ids.second, raw_version: "0.0.0+rev1" });
    expect(requests(from).at(-1)).toBe(
      `GET /v6/release?$filter=(raw_version eq '0.0.0%2Brev1') and (belongs_to__application eq ${fleet})&$select=id,raw_version`,
    );
    await sdk.models.release.setKnownIssueList(ids.first, "wifi drops after an hour");
    expect(requests(from).at(-1)).toBe(
      `PATCH /v6/release(${ids.first}) {"known_issue_list":"wifi drops after an hour"}`,
    );
    const withIssues = await sdk.models.release.get(ids.first, { $select: "known_issue_list" });
    expect(withIssues).toEqual({ known_issue_list: "wifi drops after an hour" });
    await expect(sdk.models.release.get({ application: fleet, rawVersion: "7.7.7" })).rejects.toThrow(
      /Release not found/,
    );
  });

  it("is in GraphQL", async () => {
    const reply = await graphql<{ release: Row }>(
      world.server,
      `query($id: Int) { release(id: $id) { rawVersion semverMajor semverPrerelease semverBuild variant revision knownIssueList } }`,
      { id: ids.beta },
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.data?.release).toEqual({
      rawVersion: "2.1.0-beta.1+build.5.prod",
      semverMajor: 2,
      semverPrerelease: "beta.1",
      semverBuild: "build.5",
      variant: "prod",
      revision: 0,
      knownIssueList: null,
    });
  });
});
