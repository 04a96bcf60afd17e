import { createHash } from "node:crypto";
import { redactMembers } from "../../redact.ts";
import type { SupervisorCommand } from "../types.ts";

/** JSON with every object's members in name order: equal values, equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`);
  return `{${members.join(",")}}`;
}

/**
 * What an Idempotency-Key stands for (draft-ietf-httpapi-idempotency-key-header: the key names one
 * request, and another request with it is refused): the SHA-256 of the command and its target keys,
 * whichever surface sent it. The data is hashed as the job's row keeps it, credential members
 * redacted, so the stored fingerprint cannot confirm a guessed secret: two requests that differ
 * only in a credential's value count as the same request.
 */
export function requestFingerprint(command: SupervisorCommand, target: Record<string, unknown>): string {
  const request = {
    method: command.method,
    path: command.path,
    appScoped: command.appScoped,
    data: command.data === undefined ? null : redactMembers(command.data),
    target,
  };
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}
