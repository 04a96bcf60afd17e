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
  /** `detail`: io-ts-reporters' lines, as the real 400 gives them after its first line. */
  constructor(detail: string) {
    super(`Could not parse host config input to a valid format:\n${detail}`);
    this.name = "HostConfigError";
  }
}

// The real supervisor (16.6.0 and later) decodes a PATCH with io-ts and reports with io-ts-reporters:
// "Expecting <type> at <path> but instead got: <JSON>", and for a union "Expecting one of:\n    <a>\n
// <b>\nat <path> but instead got: <JSON>". Its 400 comes from the loose (legacy) decode, whose proxy
// is `{ [K in string]: any } & Partial<{ dns: … }>` (members 0 and 1 of the intersection in the
// path); the member types it does not check there are checked here as its strict decode words them
// (type, ip and port are members 0.0, login and password 0.1, noProxy 1 of the proxy).
const RECORD = "{ [K in string]: any }";
const DNS_PART = "Partial<{ dns: (AddressString | boolean) }>";
const proxyType = (options: ParseOptions) => (options.dns ? `(${RECORD} & ${DNS_PART})` : RECORD);
const networkType = (options: ParseOptions) =>
  `Partial<{| proxy: ${proxyType(options)}, hostname: string |}>`;

const shown = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value));
const expecting = (type: string, path: string, value: unknown, message?: string) =>
  `Expecting ${type} at ${path} but instead got: ${shown(value)}${message ? ` (${message})` : ""}`;
const expectingOneOf = (types: readonly string[], path: string, value: unknown) =>
  `Expecting one of:\n${types.map((type) => `    ${type}`).join("\n")}\nat ${path} but instead got: ${shown(value)}`;
const fail = (...lines: string[]) => new HostConfigError(lines.join("\n"));

const TYPE_PATH = "network.proxy.0.0.type";
const badType = (value: unknown) =>
  fail(
    expectingOneOf(
      PROXY_TYPES.map((t) => `"${t}"`),
      TYPE_PATH,
      value,
    ),
  );

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function optionalString(proxy: Record<string, unknown>, member: string, path: string): string | undefined {
  const value = proxy[member];
  if (value !== undefined && typeof value !== "string") throw fail(expecting("string", path, value));
  return value;
}

// io-ts' NumericIdentifier: a number or numerals as text ("1081"), stored as a number. The real
// one takes any integer from 0; a port is 1 to 65535 here, refused in the same words.
function parsePort(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const port = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw fail(
      expecting("NumericIdentifier", "network.proxy.0.0.port", value, "must be be an positive integer"),
    );
  }
  return port;
}

// The real AddressString: a short string (255 characters at most) that reads `ADDRESS:PORT`.
function parseDns(value: unknown): string | boolean | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  if (typeof value !== "string" || value.length > 255 || !/^.+:[0-9]+$/.test(value)) {
    throw fail(expectingOneOf(["AddressString", "boolean"], "network.proxy.1.dns", value));
  }
  return value;
}

// The real supervisor writes noProxy to redsocks' no_proxy list: host names are fine there.
function parseNoProxy(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw fail(expecting("Array<string>", "network.proxy.1.noProxy", value));
  value.forEach((entry, index) => {
    if (typeof entry !== "string" || !/^\S+$/.test(entry)) {
      throw fail(expecting("string", `network.proxy.1.noProxy.${index}`, entry));
    }
  });
  return value as string[];
}

/** io-ts' intersection checks each member: a value that is no object fails both (an array is a record of any). */
function notAProxy(value: unknown, options: ParseOptions): HostConfigError {
  if (!options.dns) return fail(expecting(RECORD, "network.proxy", value));
  const lines = Array.isArray(value) ? [] : [expecting(RECORD, "network.proxy.0", value)];
  return fail(...lines, expecting(DNS_PART, "network.proxy.1", value));
}

function parseProxy(value: unknown, options: ParseOptions): ProxyPatch | null | undefined {
  // The code, not the docs: `proxy: null` fails the decode (400, nothing changes); `{}` removes the proxy.
  if (!isObject(value)) throw notAProxy(value, options);
  if (Object.keys(value).length === 0) return null;
  const { type } = value;
  if (type !== undefined && !PROXY_TYPES.includes(type as ProxyType)) throw badType(type);
  const ip = optionalString(value, "ip", "network.proxy.0.0.ip");
  if (ip === "") throw fail(expecting("string", "network.proxy.0.0.ip", ip));
  const patch: ProxyPatch = {
    type: type as ProxyType | undefined,
    ip,
    port: parsePort(value.port),
    login: optionalString(value, "login", "network.proxy.0.1.login"),
    password: optionalString(value, "password", "network.proxy.0.1.password"),
    noProxy: parseNoProxy(value.noProxy),
    // local_ip and local_port are redsocks' own (the real one drops them), and so are unknown members.
    ...(options.dns && { dns: parseDns(value.dns) }),
  };
  const given = Object.entries(patch).filter(([, v]) => v !== undefined);
  // Nothing left once the unsupported members are dropped: the proxy stays as it is. (The real one
  // would remove it, as for `proxy: {}`; a PATCH that names only local_port should not do that.)
  if (given.length === 0) return undefined;
  return Object.fromEntries(given) as ProxyPatch;
}

/** Validates a PATCH body; members it does not know (`force`, `network.force`, …) are dropped. */
export function parseHostConfigPatch(body: unknown, options: ParseOptions): HostConfigPatch {
  const network = isObject(body) ? body.network : undefined;
  if (!isObject(network)) throw fail(expecting(networkType(options), "network", network));
  const { hostname } = network;
  // `hostname: null` fails the decode too; `""` resets it (host-config's setHostname).
  if (hostname !== undefined && typeof hostname !== "string") {
    throw fail(expecting("string", "network.hostname", hostname));
  }
  const proxy = network.proxy === undefined ? undefined : parseProxy(network.proxy, options);
  return {
    ...(hostname !== undefined && { hostname: hostname === "" ? null : hostname }),
    ...(proxy !== undefined && { proxy }),
  };
}

/** A device's hostname until someone sets one: the first 7 characters of its uuid. */
export const defaultHostname = (uuid: string) => uuid.slice(0, 7);

export function defaultHostConfig(uuid: string): HostConfig {
  return { network: { hostname: defaultHostname(uuid) } };
}

/** redsocks' DNS server the real one writes for `dns: true` (its dnsu2t block's default). */
export const DEFAULT_PROXY_DNS = "8.8.8.8:53";

// What the real one reads back from the redsocks.conf it wrote (balena-supervisor
// src/host-config/proxy.ts, RedsocksConf): login and password are written in double quotes and
// read with every double quote removed; `dns` is written as a dnsu2t block, `true` as 8.8.8.8:53
// and `false` as none, and read back as that block's ADDRESS:PORT.
function asReadBack(proxy: ProxyPatch): void {
  for (const member of ["login", "password"] as const) {
    const value = proxy[member];
    if (value !== undefined) proxy[member] = value.replaceAll('"', "");
  }
  if (proxy.dns === true) proxy.dns = DEFAULT_PROXY_DNS;
  if (proxy.dns === false) delete proxy.dns;
}

// The real one merges the given members into the current proxy; the result must be a whole
// proxy, and an empty noProxy list removes the list.
function mergeProxy(current: Proxy | undefined, patch: ProxyPatch): Proxy {
  const merged: ProxyPatch = { ...current, ...patch };
  if (merged.noProxy?.length === 0) delete merged.noProxy;
  asReadBack(merged);
  const { type, ip, port } = merged;
  if (type === undefined) throw badType(type);
  if (ip === undefined) throw fail(expecting("string", "network.proxy.0.0.ip", ip));
  if (port === undefined) {
    throw fail(
      expecting("NumericIdentifier", "network.proxy.0.0.port", port, "must be be an positive integer"),
    );
  }
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
