import { createHash } from "node:crypto";
import { type NameValue, type TargetRelease, type TargetRow, targetRelease } from "./target.ts";

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

type Fleet = TargetRow["belongs_to__application"];

interface ServiceState {
  readonly id: number;
  readonly image_id: number;
  readonly image: string;
  readonly environment: Strings;
  readonly labels: Strings;
  readonly composition: unknown;
}

interface ReleaseState {
  readonly id: number;
  readonly services: Record<string, ServiceState>;
  readonly volumes: unknown;
  readonly networks: unknown;
}

function releaseState(fleet: Fleet, release: TargetRelease, environment: Strings): ReleaseState {
  const composition = isObject(release.composition) ? release.composition : {};
  const composed = isObject(composition.services) ? composition.services : {};
  const services: Record<string, ServiceState> = {};
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

/** A release's state with a device's variables over each service's (the last word in precedence). */
function withDevice(state: ReleaseState, environment: Strings): ReleaseState {
  if (Object.keys(environment).length === 0) return state;
  const services: Record<string, ServiceState> = {};
  for (const [name, service] of Object.entries(state.services))
    services[name] = { ...service, environment: { ...service.environment, ...environment } };
  return { ...state, services };
}

/**
 * What every device of a fleet shares in its v3 target when it runs `release`: the release's
 * services, images, labels and composition under the fleet's variables, built and written once
 * (target-parts.ts keeps it while neither the fleet nor the release changes).
 */
export interface SharedV3 {
  readonly release: TargetRelease | null;
  readonly state: ReleaseState | undefined;
  /** `state` as JSON: the part of every such device's body that is not its own. */
  readonly text: string;
}

export function sharedV3(fleet: Fleet, release: TargetRelease | null): SharedV3 {
  const state = release
    ? releaseState(fleet, release, merged(fleet.application_environment_variable))
    : undefined;
  return { release, state, text: JSON.stringify(state) ?? "" };
}

/** The device's body around its release: `releases` is what goes under the fleet. */
function around(row: TargetRow, releases: object): object {
  const fleet = row.belongs_to__application;
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
          releases,
        },
      },
    },
  };
}

/** The v3 target state of the device the row reads; `shared` is its fleet's and release's. */
export function targetV3(
  row: TargetRow,
  shared = sharedV3(row.belongs_to__application, targetRelease(row)),
): object {
  const { release, state } = shared;
  const environment = merged(row.device_environment_variable);
  return around(row, release && state ? { [release.commit]: withDevice(state, environment) } : {});
}

// The end of a body whose `releases` is empty: `{}` and the four objects it closes.
const EMPTY_RELEASES = "{}}}}}";

/**
 * `JSON.stringify(targetV3(row, shared))`, with the shared part's text written in as it was
 * written once: a device without variables of its own costs no more than its name and config.
 */
export function targetV3Text(row: TargetRow, shared: SharedV3): string {
  const { release, state } = shared;
  const empty = JSON.stringify(around(row, {}));
  if (!release || !state || !empty.endsWith(EMPTY_RELEASES)) return JSON.stringify(targetV3(row, shared));
  const environment = merged(row.device_environment_variable);
  const text =
    Object.keys(environment).length === 0 ? shared.text : JSON.stringify(withDevice(state, environment));
  return `${empty.slice(0, -EMPTY_RELEASES.length)}{${JSON.stringify(release.commit)}:${text}}}}}}`;
}
