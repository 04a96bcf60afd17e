import { createHash } from "node:crypto";
import {
  type NameValue,
  type TargetRelease,
  type TargetRow,
  targetRelease,
} from "../../../src/devices/target.ts";

// The v3 body as fleetgate built it before it was built from shared parts (issue 46), kept as it
// was: what every body built from parts must equal, byte for byte (target-v3-parts.test.ts).
//
// GET /device/v3/<uuid>/state: the target state a balena-supervisor since v12 polls, in the shape
// its TargetState type decodes (balena-supervisor src/types/state.ts; open-balena-api's
// state-get-v3.ts builds it): keyed by the device's uuid, the device's name and configuration, and
// its fleet under the fleet's uuid with the release it should run under that release's commit.
//
// fleetgate keeps no service or image rows: a release's services are those of its composition.
// A service's `id` is stable for its name within the fleet (as a balena service row is across
// releases) and its `image_id` for its name within the release (as a release's image is); both are
// positive 31-bit numbers derived from those names.

type Strings = Record<string, string>;

/** Variables as an object, later lists overriding earlier ones (a device's over its fleet's). */
function merged(...lists: readonly (readonly NameValue[])[]): Strings {
  const out: Strings = {};
  for (const list of lists) for (const { name, value } of list) out[name] = value;
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A compose `environment` or `labels`: a map, or a list of `NAME=value` (a bare `NAME` has no value). */
function composeMap(value: unknown): Strings {
  const out: Strings = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== "string") continue;
      const at = item.indexOf("=");
      if (at > 0) out[item.slice(0, at)] = item.slice(at + 1);
    }
  } else if (isObject(value)) {
    for (const [name, item] of Object.entries(value)) {
      if (typeof item === "string" || typeof item === "number" || typeof item === "boolean")
        out[name] = String(item);
    }
  }
  return out;
}

function stableId(...parts: readonly (string | number)[]): number {
  const n = createHash("sha256").update(parts.join("\0")).digest().readUInt32BE(0) & 0x7fffffff;
  return n === 0 ? 1 : n;
}

interface Fleet {
  readonly id: number;
  readonly slug: string;
}

function releaseState(fleet: Fleet, release: TargetRelease, environment: Strings): object {
  const composition = isObject(release.composition) ? release.composition : {};
  const composed = isObject(composition.services) ? composition.services : {};
  const services: Record<string, object> = {};
  for (const [name, service] of Object.entries(composed)) {
    if (!isObject(service)) continue;
    services[name] = {
      id: stableId("service", fleet.id, name),
      image_id: stableId("image", release.id, name),
      // Built images have no registry here: they are named by fleet, service and commit.
      image: typeof service.image === "string" ? service.image : `${fleet.slug}/${name}:${release.commit}`,
      // Precedence as balena's: the composition's, then the fleet's, then the device's.
      environment: { ...composeMap(service.environment), ...environment },
      labels: composeMap(service.labels),
      composition: service,
    };
  }
  return {
    id: release.id,
    services,
    volumes: isObject(composition.volumes) ? composition.volumes : {},
    networks: isObject(composition.networks) ? composition.networks : {},
  };
}

/** The v3 target state of the device the row reads. */
export function targetV3Before(row: TargetRow): object {
  const fleet = row.belongs_to__application;
  const release = targetRelease(row);
  const environment = merged(fleet.application_environment_variable, row.device_environment_variable);
  return {
    [row.uuid]: {
      name: row.device_name,
      config: merged(fleet.application_config_variable, row.device_config_variable),
      apps: {
        [fleet.uuid]: {
          id: fleet.id,
          name: fleet.app_name,
          is_host: fleet.is_host,
          class: "fleet",
          releases: release ? { [release.commit]: releaseState(fleet, release, environment) } : {},
        },
      },
    },
  };
}
