import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { permissionsFor } from "../../src/auth/policies.ts";
import type { ODataQuery } from "../../src/core/query.ts";
import { compileQuery } from "../../src/core/read.ts";
import {
  type DeviceCaller,
  DeviceRead,
  deviceTargetQuery,
  fleetOptions,
  releaseOptions,
  TargetReads,
  targetQuery,
} from "../../src/devices/target.ts";
import { buildModel } from "../../src/model/registry.ts";

// Issue 29: a poll binds its device's ids into one target read compiled for every device, instead of
// planning and compiling a read per device (which, past the old 10,000-device cache, every poll of a
// million-device fleet did). The bound statement must be exactly the one compiled for that device.

describe("the target read of every device", () => {
  const model = buildModel();
  const reads = new TargetReads(model);
  const id = fc.integer({ min: 1, max: 2_147_483_647 });

  it("is the statement compiled for the device itself, with its own ids", () => {
    fc.assert(
      fc.property(id, id, id, (actor, deviceId, applicationId) => {
        const caller: DeviceCaller = { kind: "device", actor, deviceId, uuid: "a".repeat(32), applicationId };
        const own = compileQuery(targetQuery(deviceId), {
          model,
          permissions: permissionsFor(caller),
          format: "v4",
        });
        expect(reads.compile(caller)).toEqual(own);
      }),
      { numRuns: 200 },
    );
  });

  it("binds a part's key apart from the caller's ids (target-parts.ts)", () => {
    const byId =
      (resource: string, options: ODataQuery["options"]) =>
      (id: number): ODataQuery => ({
        resource,
        key: { kind: "id", value: { kind: "number", value: id } },
        count: false,
        options,
      });
    const queries = [deviceTargetQuery, byId("application", fleetOptions), byId("release", releaseOptions)];
    fc.assert(
      fc.property(
        id,
        id,
        id,
        id,
        fc.nat(queries.length - 1),
        (actor, deviceId, applicationId, key, which) => {
          const query = queries[which] as (key: number) => ODataQuery;
          const caller: DeviceCaller = {
            kind: "device",
            actor,
            deviceId,
            uuid: "a".repeat(32),
            applicationId,
          };
          const own = compileQuery(query(key), { model, permissions: permissionsFor(caller), format: "v4" });
          expect(new DeviceRead(model, query).compile(caller, key)).toEqual(own);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("has one text for every device: one prepared statement, whatever the fleet's size", () => {
    const texts = new Set(
      [1, 2, 3, 1_000_000].map(
        (n) =>
          reads.compile({ kind: "device", actor: n + 7, deviceId: n, uuid: "", applicationId: n % 3 })
            .statement.text,
      ),
    );
    expect(texts.size).toBe(1);
  });
});
