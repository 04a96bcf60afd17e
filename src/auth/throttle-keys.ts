import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";

/** Usernames match case-insensitively; a long one is hashed, so a key's size is bounded. */
export function usernameKey(username: string): string {
  const key = username.toLowerCase();
  return key.length <= 64 ? key : createHash("sha256").update(key).digest("base64url");
}

/** An IPv6 address's eight groups as numbers, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const plain = address.replace(/%.*$/, "");
  if (!isIPv6(plain)) return undefined;
  // A trailing dotted quad stands for two groups.
  const groupsOf = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((group) => (group.includes(".") ? ["0", "0"] : [group]));
  const [head = "", tail] = plain.split("::");
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return groups.map((group) => Number.parseInt(group, 16));
}

/** An IPv4 address as it is (unwrapped from IPv4-mapped IPv6), else the first `groups` of an IPv6 one. */
function prefixKey(address: string, groups: 3 | 4): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const all = ipv6Groups(address);
  if (!all) return address;
  return `${all
    .slice(0, groups)
    .map((group) => group.toString(16))
    .join(":")}::/${groups * 16}`;
}

/**
 * The address an address allowance counts: an IPv4 address as it is; an IPv6 address by its /64,
 * which one host (or one LAN) usually holds whole, so counting single addresses would give it 2^64
 * allowances. Not coarser: a carrier's /48 holds many unrelated subscribers, each with a /64.
 */
export function addressKey(address: string): string {
  return prefixKey(address, 4);
}

/**
 * The network one client holds, as the per-account rules count it (a pair's allowance, and who is
 * suspect while the account is under attack): an IPv4 address as it is; an IPv6 address by its /48,
 * the usual assignment to one site (and what a tunnel broker hands anyone for free). Counted by
 * /64, a /48 would be 65,536 fresh addresses, each with a guess at an account under attack.
 */
export function networkKey(address: string): string {
  return prefixKey(address, 3);
}
