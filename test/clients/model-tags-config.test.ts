import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 19: release_tag, application_config_variable and device_config_variable, as balena-sdk's
// tags and configVar models send them (src/util/dependent-resource.ts): list by parent with
// $filter and $orderby, upsert as POST then, on a 409 "unique", PATCH by parent and key, DELETE by
// parent and key. Configuration variables are the fleet organization's secrets, like environment
// variables: never visible through a public fleet. Names follow balena's rules and messages
// (open-balena-api src/features/vars-schema/env-vars.ts).

type Row = Record<string, unknown>;

describe.each(databaseKinds)("release tags and configuration variables on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let outsider: User;
  let fleet: number;
  let device: number;
  let release: number;

  const rows = async (url: string, token?: string) => {
    const reply = await world.send("GET", url, undefined, token);
    expectStatus(reply, 200, `GET ${url}`);
    return (reply.body as { d: Row[] }).d;
  };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    [owner, outsider] = [await world.user("owner"), await world.user("outsider")];
    fleet = await world.fleet("tagged-fleet", "raspberrypi4-64", owner.token);
    device = (await world.device(fleet, {}, owner.token)).id;
    release = await world.release(
      fleet,
      { commit: "abc123", status: "success", is_final: true },
      owner.token,
    );
    // A public fleet and its final release are readable by everyone: their tags and variables are not.
    expectStatus(
      await world.send("PATCH", `/v7/application(${fleet})`, { is_public: true }, owner.token),
      200,
    );
  });
  afterAll(() => world?.close());

  const cases = [
    {
      resource: "release_tag",
      parent: "release",
      key: "tag_key",
      keyValue: "stage",
      parentId: () => release,
      parentResource: "release",
    },
    {
      resource: "application_config_variable",
      parent: "application",
      key: "name",
      keyValue: "BALENA_SUPERVISOR_POLL_INTERVAL",
      parentId: () => fleet,
      parentResource: "application",
    },
    {
      resource: "device_config_variable",
      parent: "device",
      key: "name",
      keyValue: "RESIN_HOST_CONFIG_gpu_mem",
      parentId: () => device,
      parentResource: "device",
    },
  ] as const;

  describe.each(cases)("$resource", ({ resource, parent, key, keyValue, parentId, parentResource }) => {
    it("is created, listed, updated, expanded, refused twice and deleted as balena-sdk does it", async () => {
      const id = parentId();
      const created = await world.send(
        "POST",
        `/v7/${resource}`,
        { value: "one", [parent]: id, [key]: keyValue },
        owner.token,
      );
      expectStatus(created, 201, `POST ${resource}`);
      expect(created.body).toMatchObject({ [parent]: { __id: id }, [key]: keyValue, value: "one" });

      const again = await world.send(
        "POST",
        `/v7/${resource}`,
        { value: "two", [parent]: id, [key]: keyValue },
        owner.token,
      );
      expect(again.status).toBe(409);
      expect(String(again.body)).toMatch(/unique/i);

      const byKey = `$filter=${parent} eq ${id} and ${key} eq '${keyValue}'`;
      const patched = await world.send("PATCH", `/v7/${resource}?${byKey}`, { value: "two" }, owner.token);
      expect([patched.status, patched.raw]).toEqual([200, ""]);

      const listed = await rows(
        `/v7/${resource}?$filter=${parent} eq ${id}&$orderby=${key} asc`,
        owner.token,
      );
      expect(listed.map((row) => [row[key], row.value])).toEqual([[keyValue, "two"]]);
      expect(await rows(`/v7/${resource}?$select=value&${byKey}`, owner.token)).toEqual([{ value: "two" }]);
      // The reverse navigation under balena's name.
      const [expanded] = await rows(
        `/v7/${parentResource}(${id})?$select=id&$expand=${resource}($select=${key},value)`,
        owner.token,
      );
      expect(expanded?.[resource]).toEqual([{ [key]: keyValue, value: "two" }]);

      // Nobody else sees or writes it, though the public fleet and its final release are readable.
      const [seen] = await rows(
        `/v7/${parentResource}(${id})?$select=id&$expand=${resource}`,
        outsider.token,
      );
      if (parentResource !== "device") expect(seen?.[resource]).toEqual([]);
      expect(await rows(`/v7/${resource}`, outsider.token)).toEqual([]);
      expect(await rows(`/v7/${resource}`)).toHaveLength(1);
      // Without a credential (the test server's inject would send the admin's key).
      const anonymous = await fetch(`${world.server.url}/v7/${resource}`);
      expect(await anonymous.json()).toEqual({ d: [] });
      const foreign = await world.send(
        "POST",
        `/v7/${resource}`,
        { value: "x", [parent]: id, [key]: `${keyValue}_X` },
        outsider.token,
      );
      expect([foreign.status, foreign.body]).toEqual([401, "Unauthorized"]);
      const foreignPatch = await world.send(
        "PATCH",
        `/v7/${resource}?${byKey}`,
        { value: "x" },
        outsider.token,
      );
      expect(foreignPatch.status).toBe(200);
      expect(await rows(`/v7/${resource}?${byKey}`, owner.token)).toMatchObject([{ value: "two" }]);

      const deleted = await world.send("DELETE", `/v7/${resource}?${byKey}`, undefined, owner.token);
      expect([deleted.status, deleted.raw]).toEqual([200, ""]);
      expect(await rows(`/v7/${resource}?$filter=${parent} eq ${id}`, owner.token)).toEqual([]);
    });
  });

  it("release tags: balena's tag key rules, as for device and fleet tags", async () => {
    const refusals: [string, string][] = [
      ["io.balena.update", "Tag keys beginning with io.balena. are reserved."],
      ["io.resin.x", "Tag keys beginning with io.resin. are reserved."],
      ["my key", "Tag keys cannot contain whitespace."],
      [
        "",
        "It is necessary that each release tag has a tag key that has a Length (Type) that is greater than 0.",
      ],
    ];
    for (const [tag_key, message] of refusals) {
      const refused = await world.send(
        "POST",
        "/v7/release_tag",
        { value: "v", release, tag_key },
        owner.token,
      );
      expect([refused.status, refused.body], tag_key).toEqual([400, message]);
    }
    expect(await rows(`/v7/release_tag?$filter=release eq ${release}`, owner.token)).toEqual([]);
  });

  it.each([
    ["application_config_variable", "application"],
    ["device_config_variable", "device"],
  ] as const)("%s: balena's configuration variable name and value rules", async (resource, parent) => {
    const id = parent === "application" ? fleet : device;
    const namespaces =
      "Configuration variables must be part of one of the following namespaces: RESIN_, BALENA_";
    const characters =
      "Configuration variable names can only contain alphanumeric characters, underscores or a colon";
    const refusals: [string, string, string][] = [
      ["MY_VARIABLE", "1", namespaces],
      ["balena_lowercase", "1", namespaces],
      ["BALENA", "1", "Configuration variables RESIN, BALENA, USER are reserved"],
      ["USER", "1", "Configuration variables RESIN, BALENA, USER are reserved"],
      ["BALENA_A-B", "1", characters],
      ["1BALENA_X", "1", characters],
      ["", "1", namespaces],
      ["BALENA_MULTILINE", "a\nb", "Variable values cannot contain line break characters"],
    ];
    for (const [name, value, message] of refusals) {
      const refused = await world.send("POST", `/v7/${resource}`, { value, [parent]: id, name }, owner.token);
      expect([refused.status, refused.body], name).toEqual([400, message]);
    }
    for (const name of [
      "BALENA_HOST_CONFIG_gpu_mem",
      "RESIN_SUPERVISOR_POLL_INTERVAL",
      "BALENA_HOST_CONFIG_dtoverlay:1",
    ]) {
      expectStatus(
        await world.send("POST", `/v7/${resource}`, { value: "1", [parent]: id, name }, owner.token),
        201,
        name,
      );
    }
    const renamed = await world.send(
      "PATCH",
      `/v7/${resource}?$filter=${parent} eq ${id} and name eq 'BALENA_HOST_CONFIG_gpu_mem'`,
      { name: "GPU_MEM" },
      owner.token,
    );
    expect([renamed.status, renamed.body]).toEqual([400, namespaces]);
    expectStatus(
      await world.send("DELETE", `/v7/${resource}?$filter=${parent} eq ${id}`, undefined, owner.token),
      200,
    );
  });

  it("environment variables keep their own name rule", async () => {
    const refused = await world.send(
      "POST",
      "/v7/application_environment_variable",
      { value: "1", application: fleet, name: "1BAD" },
      owner.token,
    );
    expect([refused.status, refused.body]).toEqual([
      400,
      "'name' must start with a letter or underscore and hold only letters, digits and underscores",
    ]);
  });

  it("go with the release, fleet or device they belong to", async () => {
    const other = await world.fleet("short-lived", "raspberrypi4-64", owner.token);
    const otherDevice = (await world.device(other, {}, owner.token)).id;
    const otherRelease = await world.release(other, { commit: "def456", status: "success" }, owner.token);
    for (const [resource, body] of [
      ["release_tag", { release: otherRelease, tag_key: "k", value: "v" }],
      ["application_config_variable", { application: other, name: "BALENA_X", value: "v" }],
      ["device_config_variable", { device: otherDevice, name: "BALENA_Y", value: "v" }],
    ] as const) {
      expectStatus(await world.send("POST", `/v7/${resource}`, body, owner.token), 201, resource);
    }
    expectStatus(await world.send("DELETE", `/v7/application(${other})`, undefined, owner.token), 200);
    for (const resource of ["release_tag", "application_config_variable", "device_config_variable"]) {
      expect(await rows(`/v7/${resource}`), resource).toEqual([]);
    }
  });
});
