import { type KeyBox, keyFingerprint } from "../auth/key-box.ts";
import type { Executor } from "../db/database.ts";
import { param, sql, toStatement } from "../db/sql.ts";
import type { TargetDevice } from "./targets.ts";
import type { DeviceResult, SupervisorCommand } from "./types.ts";

// POST /v1/regenerate-api-key makes a device's supervisor drop its key at once and answer the new
// one. Were the cloud to wait for the device's next state report, every command until then would be
// refused by the device, and a report sent before the regeneration but recorded after it would
// bring the dead key back for good (a supervisor that reports only what changed never sends the new
// one again). So the proxy stores the new key from the answer, and remembers the old one as
// retired: src/devices/state.ts does not store a retired key a report still carries.

const REGENERATE = "/v1/regenerate-api-key";
/** Fingerprints kept per device: 8 of 64 hex digits, space-separated. */
const RETIRED_CHARS = 8 * 65 - 1;

/** The new key a device answered a regeneration with, or null when this is no such answer. */
export function regeneratedKey(command: SupervisorCommand, result: DeviceResult): string | null {
  if (command.method !== "POST" || command.path !== REGENERATE || !result.ok) return null;
  const key = typeof result.body === "string" ? result.body.trim() : "";
  // A key is one token of printable characters, as long as a state report may carry (state.ts).
  return /^[\x21-\x7e]{1,256}$/.test(key) ? key : null;
}

/**
 * Stores each device's new supervisor key and retires the one the proxy called it with. System
 * write (ARCHITECTURE.md, "System writes"): the device's own answer to its sender's command, which
 * the caller was allowed to send; the key is no field any caller writes.
 */
export async function storeRegeneratedKeys(
  db: Executor,
  keys: KeyBox,
  answers: readonly { readonly device: TargetDevice; readonly key: string }[],
): Promise<void> {
  for (const { device, key } of answers) {
    const sealed = device.supervisor_api_key_ciphertext;
    const old = sealed === null ? null : keyFingerprint(keys.unseal(sealed));
    await db.query(
      toStatement(sql`UPDATE "device" SET
          "supervisor_api_key_ciphertext" = ${param(keys.seal(key), "text")},
          "supervisor_api_key_retired" = left(concat_ws(' ', ${param(old, "text")}, "supervisor_api_key_retired"), ${param(RETIRED_CHARS, "int4")})
        WHERE "id" = ${param(device.id, "int4")}`),
    );
  }
}

/**
 * Stores the new keys among a command's answers (each with the device it came from). Should the
 * database fail here, the device's next state report brings its new key, as before the proxy
 * stored it (the old key is then not retired): the command's answers stand either way.
 */
export async function keepRegeneratedKeys(
  db: Executor,
  keys: KeyBox,
  command: SupervisorCommand,
  pairs: readonly (readonly [TargetDevice, DeviceResult])[],
): Promise<void> {
  const answers = pairs.flatMap(([device, result]) => {
    const key = regeneratedKey(command, result);
    return key === null ? [] : [{ device, key }];
  });
  if (answers.length === 0) return;
  await storeRegeneratedKeys(db, keys, answers).catch(() => undefined);
}
