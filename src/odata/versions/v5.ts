import type { VersionStep } from "./step.ts";

// v5 → v6: a device's device type and running release became links; v5 read them as text.
export const v5: VersionStep = {
  version: "v5",
  to: "v6",
  missing: { device: ["is_of__device_type", "is_running__release"] },
  derived: {
    device: {
      device_type: ["is_of__device_type", "slug"],
      is_on__commit: ["is_running__release", "commit"],
    },
  },
};
