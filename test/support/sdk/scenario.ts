import { describe, expect, it } from "vitest";
import type { DatabaseKind } from "../databases.ts";
import { apiKeyScenario, authScenario, catalogueScenario, organizationScenario } from "./account.ts";
import { applicationScenario, deviceScenario } from "./fleets.ts";
import { releaseScenario, tagAndVariableScenario } from "./releases.ts";
import { type Api, sdkLineOf, useSdkWorld } from "./world.ts";

/**
 * The SDK acceptance scenario of one line on one database, in order: the account calls, fleets and
 * devices (which create, move and remove), releases, tags and variables.
 */
export function sdkScenario(api: Api, kind: DatabaseKind): void {
  describe(`${sdkLineOf(api)} on /${api}/ as an organization member on ${kind}`, () => {
    const world = useSdkWorld(api, kind, `sdk-member-${api}`);
    authScenario(world);
    apiKeyScenario(world);
    organizationScenario(world);
    catalogueScenario(world);
    applicationScenario(world);
    deviceScenario(world);
    releaseScenario(world);
    tagAndVariableScenario(world);

    it("the SDK only called endpoints the server serves, under its own version", () => {
      const paths = [
        ...new Set(world.log.map((e) => e.request.replace(/^(\S+) https?:\/\/[^/]+(\/[^?( ]*).*$/, "$1 $2"))),
      ];
      const unanswered = world.log.filter((e) => e.response?.startsWith("404")).map((e) => e.request);
      expect(unanswered, `paths called: ${paths.join(", ")}`).toEqual([]);
      // OData roots only: /actor/v1/whoami, /api-key/v2/ and /device-types/v1 are versioned routes of their own.
      const otherVersions = paths.filter((path) => /^\S+ \/v\d+\//.test(path) && !path.includes(` /${api}/`));
      expect(otherVersions).toEqual([]);
    });
  });
}
