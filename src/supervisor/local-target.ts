import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { TargetSource } from "./target-poller.ts";

// An unmanaged device has no cloud; its target is <data-dir>/target.json, `{"commit": "…"}`,
// written by whoever plays the cloud (an operator, a test, the fleet simulator).
export const TARGET_FILE = "target.json";

export function localTarget(dataDir: string): TargetSource {
  return async () => {
    let text: string;
    try {
      text = await readFile(join(dataDir, TARGET_FILE), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    const commit = (JSON.parse(text) as { commit?: unknown }).commit;
    if (commit !== null && typeof commit !== "string")
      throw new Error(`${TARGET_FILE}: commit is not a string`);
    return commit;
  };
}
