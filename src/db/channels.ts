import { type Fragment, raw, sql } from "./sql.ts";

// The channels of the change bus (PostgreSQL LISTEN/NOTIFY), for the writers (core, devices, proxy
// jobs) and the listeners (events, GraphQL subscriptions) alike. A writer publishes inside its own
// statement, so a change is announced exactly when its transaction commits, to every instance on
// the database; a rolled-back write announces nothing. A payload names rows, never their values:
// each subscriber reads the row again under its own permissions.

export const channels = {
  /** `<device id>:<fleet id>`: a device's online state, status, release or download progress changed. */
  device: "fleetgate_device",
  /** `<fleet id>`: a fleet's row changed (trigger on "application", migration 20261129000000). */
  fleet: "fleetgate_fleet",
  /** `<command job id>`: a command job's counts or status changed. */
  commandJob: "fleetgate_command_job",
  /**
   * `<actor id>`: a credential of this actor may have ended (a key deleted or expiring otherwise, a
   * password changed, a user deleted) or its rights changed (triggers, migration 20261201000300).
   */
  credential: "fleetgate_credential",
  /**
   * `device:<id>`, `fleet:<id>`, `release:<id>` or `all`: what a device's target state is read from
   * changed (triggers, migration 20261202043900); the target-state cache forgets what it names.
   */
  target: "fleetgate_target",
} as const;

export type Channel = (typeof channels)[keyof typeof channels];

/** `pg_notify(<channel>, <payload>)`, for a writer's statement. */
export function notify(channel: Channel, payload: Fragment): Fragment {
  return sql`pg_notify(${raw(`'${channel}'`)}, ${payload})`;
}

/** The payload of `channels.device` from the device's id and fleet columns. */
export function devicePayload(id: Fragment, fleet: Fragment): Fragment {
  return sql`${id}::text || ':' || ${fleet}::text`;
}

export interface DeviceChange {
  readonly device: number;
  readonly fleet: number;
}

/** A `channels.device` payload, or undefined for one this version does not understand. */
export function parseDeviceChange(payload: string): DeviceChange | undefined {
  const match = /^(\d+):(\d+)$/.exec(payload);
  return match ? { device: Number(match[1]), fleet: Number(match[2]) } : undefined;
}

/** A payload that is one row id (`channels.fleet`, `channels.commandJob`, `channels.credential`). */
export function parseId(payload: string): number | undefined {
  return /^\d+$/.test(payload) ? Number(payload) : undefined;
}
