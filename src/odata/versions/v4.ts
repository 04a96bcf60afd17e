import type { VersionStep } from "./step.ts";

// v4 → v5: my_application appeared.
export const v4: VersionStep = {
  version: "v4",
  to: "v5",
  missingResources: ["my_application"],
};
