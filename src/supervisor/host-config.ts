import { isIP } from "node:net";

// The host configuration a device exposes at /v1/device/host-config: its hostname and
// an optional redsocks proxy. Validation messages follow the real supervisor's io-ts
// wording ("Expecting <type> at <path> but instead got: <value>") so clients can show them.
// As io-ts decodes it there, members the schema does not name are dropped, not refused.

export const PROXY_TYPES = ["socks4", "socks5", "http-connect", "http-relay"] as const;
export type ProxyType = (typeof PROXY_TYPES)[number];

export interface Proxy {
  readonly type: ProxyType;
  readonly ip: string;
  readonly port: number;
  readonly login?: string;
  readonly password?: string;
  readonly noProxy?: readonly string[];
  /** redsocks' DNS server, `ADDRESS:PORT`, or a boolean (supervisor 16.6.0 and later). */
  readonly dns?: string | boolean;
}

export interface HostConfig {
  readonly network: { readonly hostname: string; readonly proxy?: Proxy };
}

/** The proxy members a PATCH gives; they are merged into the current proxy. */
export type ProxyPatch = { -readonly [K in keyof Proxy]?: Proxy[K] };

/** What a PATCH asks for: `undefined` leaves a member alone, `null` resets it. */
export interface HostConfigPatch {
  readonly hostname?: string | null;
  /** null: `proxy: {}`, which removes the proxy. */
  readonly proxy?: ProxyPatch | null;
}

export interface ParseOptions {
  /** proxy.dns exists from supervisor 16.6.0; before, it is a member like any unknown one. */
  readonly dns: boolean;
}

export class HostConfigError extends Error {
  constructor(detail: string) {
    super(`Could not parse host config input to a valid format:\n${detail}`);
    this.name = "HostConfigError";
  }
}

// The real supervisor's descriptions of `network` and `proxy`, quoted so the messages match.
const PROXY_TYPE = "({ [K in string]: any } & Partial<{ dns: (AddressString | boolean) }>)";
const NETWORK_TYPE = `Partial<{| proxy: ${PROXY_TYPE}, hostname: string |}>`;

const shown = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value));
const expecting = (type: string, path: string, value: unknown) =>
  new HostConfigError(`Expecting ${type} at ${path} but instead got: ${shown(value)}`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function optionalString(proxy: Record<string, unknown>, member: string): string | undefined {
  const value = proxy[member];
  if (value !== undefined && typeof value !== "string") {
    throw expecting("string", `network.proxy.${member}`, value);
  }
  return value;
}

// io-ts' NumericIdentifier: a number or numerals as text ("1081"), stored as a number.
function parsePort(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const port = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw expecting("integer", "network.proxy.port", value);
  }
  return port;
}

// The real AddressString: an address and a port, `ADDRESS:PORT`.
function parseDns(value: unknown): string | boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  const match = typeof value === "string" ? /^(.+):(\d{1,5})$/.exec(value) : null;
  const address = match?.[1]?.replace(/^\[(.*)\]$/, "$1") ?? "";
  if (!match || isIP(address) === 0 || Number(match[2]) < 1 || Number(match[2]) > 65535) {
    throw expecting("(AddressString | boolean)", "network.proxy.dns", value);
  }
  return value as string;
}

// The real supervisor writes noProxy to redsocks' no_proxy list: host names are fine there.
function parseNoProxy(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw expecting("Array<string>", "network.proxy.noProxy", value);
  value.forEach((entry, index) => {
    if (typeof entry !== "string" || !/^\S+$/.test(entry)) {
      throw expecting("string", `network.proxy.noProxy.${index}`, entry);
    }
  });
  return value as string[];
}

function parseProxy(value: unknown, options: ParseOptions): ProxyPatch | null {
  // The code, not the docs: `proxy: null` fails the decode (400); `{}` removes the proxy.
  if (!isObject(value)) throw expecting(PROXY_TYPE, "network.proxy", value);
  if (Object.keys(value).length === 0) return null;
  const { type } = value;
  if (type !== undefined && !PROXY_TYPES.includes(type as ProxyType)) {
    throw expecting(PROXY_TYPES.map((t) => `"${t}"`).join(" | "), "network.proxy.type", type);
  }
  const ip = optionalString(value, "ip");
  if (ip === "") throw expecting("string", "network.proxy.ip", ip);
  const patch: ProxyPatch = {
    type: type as ProxyType | undefined,
    ip,
    port: parsePort(value.port),
    login: optionalString(value, "login"),
    password: optionalString(value, "password"),
    noProxy: parseNoProxy(value.noProxy),
    // local_ip and local_port are redsocks' own: the real one ignores them, and so does this.
    ...(options.dns && { dns: parseDns(value.dns) }),
  };
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ProxyPatch;
}

/** Validates a PATCH body; members it does not know (`force`, `network.force`, …) are dropped. */
export function parseHostConfigPatch(body: unknown, options: ParseOptions): HostConfigPatch {
  const network = isObject(body) ? body.network : undefined;
  if (!isObject(network)) throw expecting(NETWORK_TYPE, "network", network);
  const { hostname } = network;
  // `hostname: null` fails the decode too; `""` resets it (host-config's setHostname).
  if (hostname !== undefined && typeof hostname !== "string") {
    throw expecting("string", "network.hostname", hostname);
  }
  return {
    ...(hostname !== undefined && { hostname: hostname === "" ? null : hostname }),
    ...(network.proxy !== undefined && { proxy: parseProxy(network.proxy, options) }),
  };
}

/** A device's hostname until someone sets one: the first 7 characters of its uuid. */
export const defaultHostname = (uuid: string) => uuid.slice(0, 7);

export function defaultHostConfig(uuid: string): HostConfig {
  return { network: { hostname: defaultHostname(uuid) } };
}

// The real one merges the given members into the current proxy; the result must be a whole
// proxy, and an empty noProxy list removes the list.
function mergeProxy(current: Proxy | undefined, patch: ProxyPatch): Proxy {
  const merged: ProxyPatch = { ...current, ...patch };
  if (merged.noProxy?.length === 0) delete merged.noProxy;
  const { type, ip, port } = merged;
  if (type === undefined)
    throw expecting(PROXY_TYPES.map((t) => `"${t}"`).join(" | "), "network.proxy.type", type);
  if (ip === undefined) throw expecting("string", "network.proxy.ip", ip);
  if (port === undefined) throw expecting("integer", "network.proxy.port", port);
  return merged as Proxy;
}

export function applyHostConfigPatch(current: HostConfig, patch: HostConfigPatch, uuid: string): HostConfig {
  const hostname =
    patch.hostname === undefined ? current.network.hostname : (patch.hostname ?? defaultHostname(uuid));
  const proxy =
    patch.proxy === undefined
      ? current.network.proxy
      : patch.proxy === null
        ? undefined
        : mergeProxy(current.network.proxy, patch.proxy);
  return { network: { hostname, ...(proxy && { proxy }) } };
}
