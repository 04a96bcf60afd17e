import type { VersionStep } from "./step.ts";

// v3 → v4 (multicontainer): builds became releases, which gained tags; a device's name became
// device_name.
export const v3: VersionStep = {
  version: "v3",
  to: "v4",
  renamedResources: { build: "release" },
  missingResources: ["release_tag"],
  renamed: {
    device: { name: "device_name", should_be_running__build: "should_be_running__release" },
    application: { owns__build: "owns__release" },
  },
  missing: { release: ["release_tag"] },
};
