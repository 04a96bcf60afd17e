// A device-type catalogue entry (device-type.json), as served by /config and /device-types/v1.
// Its shape is src/catalogue/schema.ts; what follows are the facts derived from its state.
export const architectures = ["aarch64", "armv7hf", "amd64", "rpi", "i386", "armv5e"] as const;
export const deviceTypeStates = ["RELEASED", "NEW", "EXPERIMENTAL", "DISCONTINUED", "DEVELOPMENT"] as const;

export type Arch = (typeof architectures)[number];
export type DeviceTypeState = (typeof deviceTypeStates)[number];

/** A slug or alias: also what /device-types/v1/:slug accepts before it looks anything up. */
export const slugPattern = /^[a-z0-9][a-z0-9_-]{0,99}$/;

/** Devices of a discontinued type may poll as often as they like; current ones at most every 10 s. */
export function pollIntervalRule(state: DeviceTypeState): { min: number; default: number } {
  return state === "DISCONTINUED" ? { min: 0, default: 1 } : { min: 10, default: 10 };
}
