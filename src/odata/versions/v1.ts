import type { VersionStep } from "./step.ts";

// v1 is an alias of v2.
export const v1: VersionStep = { version: "v1", to: "v2" };
