import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type TargetRelease, type TargetRow, targetRelease } from "../../src/devices/target.ts";
import { sharedV3, targetV3, targetV3Text } from "../../src/devices/target-v3.ts";
import { targetV3Before } from "../support/devices/target-v3-before.ts";

// Issue 46: a v3 body is written from its fleet's shared part, built once (the release's services
// under the fleet's variables, as JSON), and the device's own name, config and variables. For any
// target it must be, byte for byte, the body built whole as before (test/support/devices/target-v3-before.ts):
// variables overriding across compose, fleet and device in either form, names JavaScript orders
// first ("12") or treats apart ("__proto__"), odd compositions.

const name = fc.oneof(
  fc.constantFrom("A", "B", "V1", "E1", "N", "0", "12", "__proto__", "constructor", "toString", "ä x"),
  fc.string({ maxLength: 4 }),
);
const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null));

/** JSON object text of `entries` in their order, parsed as the database's text is (`__proto__` its own key). */
function object(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  return JSON.parse(
    `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`,
  );
}
const entries = <T>(value: fc.Arbitrary<T>) => fc.array(fc.tuple(name, value), { maxLength: 5 });

/** A compose `environment` or `labels`: a map or a list, with what is neither. */
const composeMap = fc.oneof(
  entries(fc.oneof(scalar, fc.constant({ nested: 1 }))).map(object),
  fc.array(
    fc.oneof(
      fc.tuple(name, fc.string({ maxLength: 3 })).map(([key, value]) => `${key}=${value}`),
      name,
      fc.integer(),
    ),
    { maxLength: 5 },
  ),
  scalar,
);
const service = fc.oneof(
  fc.record(
    {
      image: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
      environment: composeMap,
      labels: composeMap,
    },
    { requiredKeys: [] },
  ),
  scalar,
);
const composition = fc.oneof(
  fc.constant(null),
  scalar,
  fc
    .record(
      {
        services: fc.oneof(entries(service).map(object), scalar),
        volumes: fc.oneof(entries(scalar).map(object), scalar),
        networks: fc.oneof(entries(scalar).map(object), scalar),
      },
      { requiredKeys: [] },
    )
    .map((value) => JSON.parse(JSON.stringify(value)) as unknown),
);
const release: fc.Arbitrary<TargetRelease> = fc.record({
  id: fc.integer({ min: 1, max: 1000 }),
  commit: fc.string({ minLength: 1, maxLength: 8 }),
  composition,
});
const variables = fc
  .uniqueArray(fc.record({ name, value: fc.string({ maxLength: 4 }) }), {
    selector: (variable) => variable.name,
    maxLength: 5,
  })
  .map((list) => [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
const row: fc.Arbitrary<TargetRow> = fc.record({
  id: fc.integer({ min: 1 }),
  uuid: fc.stringMatching(/^[0-9a-f]{32}$/),
  device_name: fc.string({ maxLength: 6 }),
  device_config_variable: variables,
  device_environment_variable: variables,
  should_be_running__release: fc.option(release),
  belongs_to__application: fc.record({
    id: fc.integer({ min: 1 }),
    uuid: fc.stringMatching(/^[0-9a-f]{32}$/),
    app_name: fc.string({ maxLength: 6 }),
    slug: fc.string({ maxLength: 6 }),
    is_host: fc.boolean(),
    application_config_variable: variables,
    application_environment_variable: variables,
    should_be_running__release: fc.option(release),
  }),
});

describe("the v3 body from shared parts", () => {
  it("is the body built whole, byte for byte", () => {
    fc.assert(
      fc.property(row, (target) => {
        const before = JSON.stringify(targetV3Before(target));
        const shared = sharedV3(target.belongs_to__application, targetRelease(target));
        expect(targetV3Text(target, shared)).toBe(before);
        expect(JSON.stringify(targetV3(target))).toBe(before);
      }),
      { numRuns: 2_000 },
    );
  });

  it("is the body built whole for every device sharing one fleet's part", () => {
    fc.assert(
      fc.property(row, fc.array(row, { minLength: 1, maxLength: 4 }), (first, others) => {
        const fleet = first.belongs_to__application;
        const shared = sharedV3(fleet, targetRelease(first));
        for (const other of others) {
          // Another device of the same fleet running the same release, with variables of its own.
          const target = {
            ...other,
            should_be_running__release: first.should_be_running__release,
            belongs_to__application: fleet,
          };
          expect(targetV3Text(target, shared)).toBe(JSON.stringify(targetV3Before(target)));
        }
      }),
      { numRuns: 500 },
    );
  });
});
