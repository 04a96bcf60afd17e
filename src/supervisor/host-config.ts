import { isIP } from "node:net";

// The host configuration a device exposes at /v1/device/host-config: its hostname and
// an optional redsocks proxy. Validation messages follow the real supervisor's io-ts
// wording ("Expecting <type> at <path> but instead got: <value>") so clients can show them.

export const PROXY_TYPES = ["socks4", "socks5", "http-connect", "http-relay"] as const;
export type ProxyType = (typeof PROXY_TYPES)[number];

export interface Proxy {
  readonly type: ProxyType;
  readonly ip: string;
  readonly port: number;
  readonly login?: string;
  readonly password?: string;
  readonly noProxy?: readonly string[];
}

export interface HostConfig {
  readonly network: { readonly hostname: string; readonly proxy?: Proxy };
}

/** What a PATCH asks for: `undefined` leaves a member alone, `null` resets it. */
export interface HostConfigPatch {
  readonly hostname?: string | null;
  readonly proxy?: Proxy | null;
}

export class HostConfigError extends Error {
  constructor(detail: string) {
    super(`Could not parse host config input to a valid format:\n${detail}`);
    this.name = "HostConfigError";
  }
}

// The real supervisor's description of `network`, quoted so the message matches it.
const NETWORK_TYPE =
  "Partial<{| proxy: ({ [K in string]: any } & Partial<{ dns: (AddressString | boolean) }>), hostname: string |}>";

const shown = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value));
const expecting = (type: string, path: string, value: unknown) =>
  new HostConfigError(`Expecting ${type} at ${path} but instead got: ${shown(value)}`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function rejectUnknown(value: Record<string, unknown>, path: string, known: readonly string[]): void {
  // Fail closed: a member we would silently drop is an error that names it.
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined)
    throw new HostConfigError(`Unknown member at ${path ? `${path}.` : ""}${unknown}`);
}

function isIpOrCidr(text: string): boolean {
  const [address = "", prefix, ...rest] = text.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

function optionalString(proxy: Record<string, unknown>, member: string): string | undefined {
  const value = proxy[member];
  if (value !== undefined && typeof value !== "string") {
    throw expecting("string", `network.proxy.${member}`, value);
  }
  return value;
}

function parseProxy(value: unknown): Proxy | null {
  if (value === null) return null;
  if (!isObject(value)) throw expecting("object", "network.proxy", value);
  // An empty proxy object means "no proxy", as on the real device.
  if (Object.keys(value).length === 0) return null;
  rejectUnknown(value, "network.proxy", ["type", "ip", "port", "login", "password", "noProxy"]);
  const { type, ip, port, noProxy } = value;
  if (!PROXY_TYPES.includes(type as ProxyType)) {
    throw expecting(PROXY_TYPES.map((t) => `"${t}"`).join(" | "), "network.proxy.type", type);
  }
  if (typeof ip !== "string" || ip === "") throw expecting("string", "network.proxy.ip", ip);
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw expecting("integer", "network.proxy.port", port);
  }
  const login = optionalString(value, "login");
  const password = optionalString(value, "password");
  if (noProxy !== undefined) {
    if (!Array.isArray(noProxy)) throw expecting("Array<IP | CIDR>", "network.proxy.noProxy", noProxy);
    noProxy.forEach((entry, index) => {
      if (typeof entry !== "string" || !isIpOrCidr(entry)) {
        throw expecting("IP | CIDR", `network.proxy.noProxy.${index}`, entry);
      }
    });
  }
  return {
    type: type as ProxyType,
    ip,
    port,
    ...(login !== undefined && { login }),
    ...(password !== undefined && { password }),
    ...(noProxy !== undefined && { noProxy: noProxy as string[] }),
  };
}

/** Validates a PATCH body (`force` may sit beside `network`). */
export function parseHostConfigPatch(body: unknown): HostConfigPatch {
  const network = isObject(body) ? body.network : undefined;
  if (!isObject(network)) throw expecting(NETWORK_TYPE, "network", network);
  rejectUnknown(body as Record<string, unknown>, "", ["network", "force"]);
  rejectUnknown(network, "network", ["hostname", "proxy"]);
  const { hostname } = network;
  if (hostname !== undefined && hostname !== null && typeof hostname !== "string") {
    throw expecting("string", "network.hostname", hostname);
  }
  return {
    ...(hostname !== undefined && { hostname: hostname === "" ? null : hostname }),
    ...(network.proxy !== undefined && { proxy: parseProxy(network.proxy) }),
  };
}

/** A device's hostname until someone sets one: the first 7 characters of its uuid. */
export const defaultHostname = (uuid: string) => uuid.slice(0, 7);

export function defaultHostConfig(uuid: string): HostConfig {
  return { network: { hostname: defaultHostname(uuid) } };
}

export function applyHostConfigPatch(current: HostConfig, patch: HostConfigPatch, uuid: string): HostConfig {
  const hostname =
    patch.hostname === undefined ? current.network.hostname : (patch.hostname ?? defaultHostname(uuid));
  const proxy = patch.proxy === undefined ? current.network.proxy : (patch.proxy ?? undefined);
  return { network: { hostname, ...(proxy && { proxy }) } };
}
