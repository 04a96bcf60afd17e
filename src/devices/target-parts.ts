import type { ODataQuery, QueryOptions } from "../core/query.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import {
  type DeviceCaller,
  DeviceRead,
  deviceTargetQuery,
  fleetOptions,
  type NameValue,
  releaseOptions,
  type TargetRelease,
  type TargetRow,
  targetDigest,
} from "./target.ts";
import type { Stamp, TargetCache } from "./target-cache.ts";
import { type SharedV3, sharedV3 } from "./target-v3.ts";

// A device's target read from parts (issue 46): what every device of a fleet shares is read and
// built once per change, and a poll reads only what is the device's own.
// 1. A part is what one fresh read under a device key of its fleet gave: a fleet's (its row, its
//    variables, its release) or a release's (a device's pin), as the text `targetQuery` embeds.
// 2. A part is used while nothing it read has been announced since its read started, by the
//    announcements and stamps of the target-state cache (target-cache.ts): a fleet's part reads
//    `fleet:<id>` and `release:<id>` of its release, a release's `release:<id>`. While announcements
//    may go unheard (before the LISTEN, after its connection is lost), no part is used or kept.
// 3. Every poll reads the device's own part (one statement, under its own key: its name, variables,
//    and the ids of its pin and fleet, which its key must read) and takes the parts it names.
// 4. The parts' texts go where the device's part names their ids: the text `targetQuery` reads, to
//    the byte, so the digest and ETag are those of the whole read. A text of another shape, or a
//    part gone meanwhile, is read whole instead.
// 5. A device whose key names another fleet than the one it is in (moved since the key resolved)
//    is read whole: its key's permissions are not those its fleet's part was read with.
// 6. Bounded: at most `bytes` of parts' text (each held about three times: its text, parsed, and
//    its v3 build); the part used least recently goes first.

/** One part's text (as the whole read embeds it), parsed, with when its read started. */
interface Part<Value> {
  readonly text: string;
  readonly value: Value;
  readonly at: Stamp;
  readonly changes: readonly string[];
}

type Fleet = TargetRow["belongs_to__application"];

interface FleetPart extends Part<Fleet> {
  /** Its devices' shared v3 parts, by the release they run (the fleet's, or a pin's part). */
  readonly v3: Map<number, { readonly release: TargetRelease; readonly shared: SharedV3 }>;
}

/** The device's own part, as `deviceTargetQuery` reads it. */
interface DevicePart {
  readonly id: number;
  readonly uuid: string;
  readonly device_name: string;
  readonly device_config_variable: readonly NameValue[];
  readonly device_environment_variable: readonly NameValue[];
  readonly should_be_running__release: { readonly id: number } | null;
  readonly belongs_to__application: { readonly id: number };
}

/** A device's target as read from parts: the whole read's digest, and the row it parses to. */
export interface PartsTarget {
  readonly row: TargetRow;
  readonly digest: string;
  /** Its v3 body's shared part, asked for when a v3 body is sent: its fleet part's, or built now. */
  v3(): SharedV3;
}

const byId =
  (resource: string, options: QueryOptions) =>
  (id: number): ODataQuery => ({
    resource,
    key: { kind: "id", value: { kind: "number", value: id } },
    count: false,
    options,
  });

/** A pinned release's shared v3 parts kept beside its fleet's: a few pins a fleet, not thousands. */
const PINS_PER_FLEET = 16;

export class TargetParts {
  private readonly devices: DeviceRead;
  private readonly fleets: DeviceRead;
  private readonly releases: DeviceRead;
  /** Fleet parts by `fleet:<id>`, release parts by `release:<id>`, least recently used first. */
  private readonly parts = new Map<string, Part<unknown>>();
  /** The length of the parts' texts. */
  private held = 0;

  constructor(
    model: Model,
    private readonly cache: TargetCache,
    readonly bytes: number,
  ) {
    this.devices = new DeviceRead(model, deviceTargetQuery);
    this.fleets = new DeviceRead(model, byId("application", fleetOptions));
    this.releases = new DeviceRead(model, byId("release", releaseOptions));
  }

  /** Parts held now. */
  get count(): number {
    return this.parts.size;
  }

  /**
   * The caller's target from its own part and its fleet's and pin's; undefined when it must be
   * read whole (4, 5), or "none" when the caller reads no device (as the whole read would).
   */
  async read(db: Executor, caller: DeviceCaller): Promise<PartsTarget | "none" | undefined> {
    const text = await this.devices.read(db, caller, caller.deviceId);
    if (text === undefined) return "none";
    const [device] = JSON.parse(text) as [DevicePart];
    const fleetId = device.belongs_to__application.id;
    if (fleetId !== caller.applicationId) return undefined;
    const pinId = device.should_be_running__release?.id ?? 0;
    const tail = `,"should_be_running__release":${pinId === 0 ? "null" : `{"id":${pinId}}`},"belongs_to__application":{"id":${fleetId}}}]`;
    if (!text.endsWith(tail)) return undefined;
    const fleet = (await this.part(db, caller, "fleet", fleetId)) as FleetPart | undefined;
    const pin =
      pinId === 0
        ? undefined
        : ((await this.part(db, caller, "release", pinId)) as Part<TargetRelease> | undefined);
    if (!fleet || (pinId !== 0 && !pin)) return undefined;
    const digest = targetDigest(
      text.slice(0, -tail.length),
      `,"should_be_running__release":${pin?.text ?? "null"},"belongs_to__application":`,
      fleet.text,
      "}]",
    );
    const row: TargetRow = {
      id: device.id,
      uuid: device.uuid,
      device_name: device.device_name,
      device_config_variable: device.device_config_variable,
      device_environment_variable: device.device_environment_variable,
      should_be_running__release: pin?.value ?? null,
      belongs_to__application: fleet.value,
    };
    const release = pin?.value ?? fleet.value.should_be_running__release;
    return { row, digest, v3: () => this.shared(fleet, release) };
  }

  /** The fleet's shared v3 part for `release`, built once per fleet part and release part. */
  private shared(fleet: FleetPart, release: TargetRelease | null): SharedV3 {
    if (!release) return sharedV3(fleet.value, null);
    const built = fleet.v3.get(release.id);
    if (built?.release === release) return built.shared;
    if (fleet.v3.size >= PINS_PER_FLEET) fleet.v3.clear();
    const shared = sharedV3(fleet.value, release);
    fleet.v3.set(release.id, { release, shared });
    return shared;
  }

  /** A part from the cache while it is current (2), else read now and kept unless changed meanwhile. */
  private async part(
    db: Executor,
    caller: DeviceCaller,
    kind: "fleet" | "release",
    id: number,
  ): Promise<Part<unknown> | undefined> {
    const key = `${kind}:${id}`;
    const held = this.parts.get(key);
    if (held) this.drop(key, held);
    if (held && this.cache.unchangedSince(held.at, held.changes)) {
      this.hold(key, held);
      return held;
    }
    const at = this.cache.stamp();
    const json = await (kind === "fleet" ? this.fleets : this.releases).read(db, caller, id);
    // Read as one row's array: the part's text is the row's object.
    if (json === undefined || !json.startsWith("[{") || !json.endsWith("}]")) return undefined;
    const text = json.slice(1, -1);
    const value = JSON.parse(text) as Fleet | TargetRelease;
    const release = kind === "fleet" ? (value as Fleet).should_be_running__release : null;
    const changes = release ? [key, `release:${release.id}`] : [key];
    const part: Part<unknown> | FleetPart =
      kind === "fleet"
        ? { text, value: value as Fleet, at, changes, v3: new Map() }
        : { text, value, at, changes };
    if (this.cache.unchangedSince(at, changes)) {
      this.hold(key, part);
      for (const [oldest, cold] of this.parts) {
        if (this.held <= this.bytes) break;
        this.drop(oldest, cold);
      }
    }
    return part;
  }

  private hold(key: string, part: Part<unknown>): void {
    // Two polls that missed at once both read it: the second replaces the first.
    const before = this.parts.get(key);
    if (before) this.drop(key, before);
    this.parts.set(key, part);
    this.held += part.text.length;
  }

  private drop(key: string, part: Part<unknown>): void {
    this.parts.delete(key);
    this.held -= part.text.length;
  }
}
