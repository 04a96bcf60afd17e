import type { VersionStep } from "./step.ts";

// v3 → v4 (multicontainer): builds became releases; a device's name became device_name.
export const v3: VersionStep = {
  version: "v3",
  next: "v4",
  renamedResources: { build: "release" },
  renamed: {
    device: { name: "device_name", should_be_running__build: "should_be_running__release" },
    application: { owns__build: "owns__release" },
  },
};
