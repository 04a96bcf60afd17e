import type { VersionStep } from "./step.ts";

// v2 → v3: links gained verbs.
export const v2: VersionStep = {
  version: "v2",
  to: "v3",
  renamed: {
    device: {
      application: "belongs_to__application",
      user: "belongs_to__user",
      device: "is_managed_by__device",
      support_expiry_date: "is_accessible_by_support_until__date",
    },
    application: {
      device: "owns__device",
      application: "depends_on__application",
      support_expiry_date: "is_accessible_by_support_until__date",
    },
  },
};
