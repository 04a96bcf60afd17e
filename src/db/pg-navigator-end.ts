import { lent } from "./pg-navigator.ts";

// The end of ./pg-navigator.ts: takes the navigator it lent to pg back.
if (lent) delete (globalThis as { navigator?: unknown }).navigator;
