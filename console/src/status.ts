// A device's overall_status, as the API computes it (README "overall_status"), in the order the
// console lists them, with the words and colours it shows them in.
export const statuses = [
  { value: "idle", label: "Online", color: "#1a7f37" },
  { value: "updating", label: "Updating", color: "#0969da" },
  { value: "configuring", label: "Configuring", color: "#9a6700" },
  { value: "post-provisioning", label: "Post-provisioning", color: "#8250df" },
  { value: "offline", label: "Offline", color: "#cf222e" },
  { value: "inactive", label: "Inactive", color: "#57606a" },
] as const;

export type Status = (typeof statuses)[number]["value"];

export function statusLabel(value: string | null | undefined): string {
  return statuses.find((status) => status.value === value)?.label ?? value ?? "Unknown";
}

/** A variable whose name says it holds a credential is shown masked until asked for. */
export const isSecretName = (name: string): boolean =>
  /(?:key|token|passw(?:or)?d|secret|jwt|authorization|credential)$/i.test(name);

export function formatTime(value: string | null | undefined): string {
  if (!value) return "never";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}
