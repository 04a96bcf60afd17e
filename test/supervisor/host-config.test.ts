import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { client, unmanagedDevice } from "../support/supervisor/supervisor-process.ts";

// GET and PATCH /v1/device/host-config: partial updates, resets, validation messages that
// name the member, the update lock, and persistence across a restart of the process.

const PREFIX = "Could not parse host config input to a valid format:\n";
const PROXY = {
  type: "socks5",
  ip: "10.0.0.1",
  port: 1080,
  login: "user",
  password: "secret",
  noProxy: ["192.168.1.10", "10.0.0.0/8", "fd00::/8"],
};

describe("fleetgate supervisor --unmanaged: host config", () => {
  const { dir, device, call, start } = unmanagedDevice();
  const hostConfig = async () => (await call("GET", "/v1/device/host-config")).json();
  const patch = (body: unknown) => call("PATCH", "/v1/device/host-config", { body });

  it("starts with the uuid's first 7 characters as hostname and no proxy", async () => {
    expect(await hostConfig()).toEqual({ network: { hostname: device.uuid.slice(0, 7) } });
  });

  it("sets the hostname and the proxy; an absent member stays as it was", async () => {
    const answer = await patch({ network: { hostname: "kiosk-1", proxy: PROXY } });
    expect([answer.status, answer.text]).toEqual([200, "OK"]);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-1", proxy: PROXY } });
    expect((await patch({ network: { hostname: "kiosk-2" } })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-2", proxy: PROXY } });
    const http = { type: "http-connect", ip: "proxy.local", port: 3128 };
    // The given members are merged into the current proxy: login, password and noProxy stay.
    expect((await patch({ network: { proxy: http } })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-2", proxy: { ...PROXY, ...http } } });
    expect((await patch({ network: {} })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-2", proxy: { ...PROXY, ...http } } });
  });

  it("resets: proxy {} to no proxy, hostname '' to the uuid's first 7 characters", async () => {
    const hostname = device.uuid.slice(0, 7);
    await patch({ network: { proxy: PROXY } });
    expect((await patch({ network: { proxy: {} } })).status).toBe(200);
    expect(((await hostConfig()) as { network: object }).network).not.toHaveProperty("proxy");
    await patch({ network: { hostname: "named" } });
    expect((await patch({ network: { hostname: "" } })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname } });
  });

  // balena-supervisor's PATCH handler decodes with io-ts and merges the given proxy members
  // into the current redsocks config (host-config/proxy.ts), so a partial proxy is an update.
  it("merges given proxy members into the current proxy; noProxy: [] alone removes the list", async () => {
    await patch({ network: { hostname: "merge", proxy: PROXY } });
    expect((await patch({ network: { proxy: { ip: "10.0.0.2", port: 1081 } } })).status).toBe(200);
    expect(await hostConfig()).toEqual({
      network: { hostname: "merge", proxy: { ...PROXY, ip: "10.0.0.2", port: 1081 } },
    });
    expect((await patch({ network: { proxy: { noProxy: [] } } })).status).toBe(200);
    const { noProxy: _dropped, ...withoutList } = PROXY;
    expect(await hostConfig()).toEqual({
      network: { hostname: "merge", proxy: { ...withoutList, ip: "10.0.0.2", port: 1081 } },
    });
    await patch({ network: { proxy: {} } });
  });

  // io-ts' NumericIdentifier takes a port as text; unknown members (the docs' example puts
  // `force` inside network; redsocks' local_ip/local_port) are stripped, not refused.
  it("reads a port given as text as a number, accepts host names in noProxy, drops unknown members", async () => {
    const answer = await patch({
      mtu: 1400,
      network: {
        hostname: "loose",
        force: true,
        extra: 1,
        proxy: {
          ...PROXY,
          port: "1081",
          noProxy: ["example.com", "10.0.0.0/8"],
          local_ip: "0.0.0.0",
          local_port: 1,
        },
      },
    });
    expect([answer.status, answer.text]).toEqual([200, "OK"]);
    expect(await hostConfig()).toEqual({
      network: { hostname: "loose", proxy: { ...PROXY, port: 1081, noProxy: ["example.com", "10.0.0.0/8"] } },
    });
    await patch({ network: { proxy: {} } });
  });

  // Since 16.6.0 the proxy may carry redsocks' dns: an `ADDRESS:PORT` or a boolean. The real one
  // writes it as redsocks.conf's dnsu2t block (`true`: 8.8.8.8:53, `false`: none) and GET reads that
  // block back (balena-supervisor test/unit/host-config.spec.ts, RedsocksConf stringify/parse).
  it("accepts proxy.dns as ADDRESS:PORT or a boolean (16.6.0+) and reads it back as the block written", async () => {
    const cases: [unknown, Record<string, unknown>][] = [
      ["1.1.1.1:53", { dns: "1.1.1.1:53" }],
      [true, { dns: "8.8.8.8:53" }],
      [false, {}],
    ];
    for (const [dns, readBack] of cases) {
      expect((await patch({ network: { proxy: { ...PROXY, dns } } })).status).toBe(200);
      expect(await hostConfig()).toEqual({
        network: { hostname: "loose", proxy: { ...PROXY, ...readBack } },
      });
    }
    await patch({ network: { proxy: {} } });
  });

  // The real one writes login and password in double quotes and reads them with every double quote
  // removed, so a quoted credential (as its own docs show them) reads back bare.
  it("reads login and password back without double quotes, as redsocks.conf gives them", async () => {
    const quoted = { ...PROXY, login: '"user"', password: 'se"cr"et' };
    expect((await patch({ network: { proxy: quoted } })).status).toBe(200);
    expect(await hostConfig()).toEqual({
      network: { hostname: "loose", proxy: { ...PROXY, login: "user", password: "secret" } },
    });
    await patch({ network: { proxy: {} } });
  });

  // The real 400 texts: io-ts-reporters over the loose decode (a proxy is `{ [K in string]: any } &
  // Partial<{ dns: … }>`, so its paths go through the intersection's members 0 and 1), a union as
  // "Expecting one of:" with one type per line; the members the loose decode leaves unchecked in the
  // words of the strict decode (type, ip, port: 0.0; login, password: 0.1; noProxy: 1).
  it("refuses invalid input with 400 text naming the member, and changes nothing", async () => {
    await patch({ network: { hostname: "before", proxy: PROXY } });
    const TYPES = 'Expecting one of:\n    "socks4"\n    "socks5"\n    "http-connect"\n    "http-relay"\n';
    const cases: [unknown, string][] = [
      [
        {},
        "Expecting Partial<{| proxy: ({ [K in string]: any } & Partial<{ dns: (AddressString | boolean) }>), hostname: string |}> at network but instead got: undefined",
      ],
      [{ network: { hostname: 123 } }, "Expecting string at network.hostname but instead got: 123"],
      [
        { network: { proxy: "socks5" } },
        'Expecting { [K in string]: any } at network.proxy.0 but instead got: "socks5"\n' +
          'Expecting Partial<{ dns: (AddressString | boolean) }> at network.proxy.1 but instead got: "socks5"',
      ],
      // The docs say null resets; the real code's io-ts decode refuses it, and the proxy stays.
      [
        { network: { hostname: "with-null", proxy: null } },
        "Expecting { [K in string]: any } at network.proxy.0 but instead got: null\n" +
          "Expecting Partial<{ dns: (AddressString | boolean) }> at network.proxy.1 but instead got: null",
      ],
      // An array is a record of anything to io-ts; only the dns part refuses it.
      [
        { network: { proxy: [] } },
        "Expecting Partial<{ dns: (AddressString | boolean) }> at network.proxy.1 but instead got: []",
      ],
      [{ network: { hostname: null } }, "Expecting string at network.hostname but instead got: null"],
      [
        { network: { proxy: { ...PROXY, type: "socks6" } } },
        `${TYPES}at network.proxy.0.0.type but instead got: "socks6"`,
      ],
      [
        { network: { proxy: { ...PROXY, ip: 5 } } },
        "Expecting string at network.proxy.0.0.ip but instead got: 5",
      ],
      [
        { network: { proxy: { ...PROXY, port: "10x" } } },
        'Expecting NumericIdentifier at network.proxy.0.0.port but instead got: "10x" (must be be an positive integer)',
      ],
      [
        { network: { proxy: { ...PROXY, port: 10.5 } } },
        "Expecting NumericIdentifier at network.proxy.0.0.port but instead got: 10.5 (must be be an positive integer)",
      ],
      [
        { network: { proxy: { ...PROXY, login: 1 } } },
        "Expecting string at network.proxy.0.1.login but instead got: 1",
      ],
      [
        { network: { proxy: { ...PROXY, noProxy: "10.0.0.1" } } },
        'Expecting Array<string> at network.proxy.1.noProxy but instead got: "10.0.0.1"',
      ],
      [
        { network: { proxy: { ...PROXY, noProxy: ["10.0.0.1", 7] } } },
        "Expecting string at network.proxy.1.noProxy.1 but instead got: 7",
      ],
      // balena-supervisor's own cases (test/unit/host-config.spec.ts): not ADDRESS:PORT, or no string.
      ...["resolver", ":", ":53", "1.1.1.1", "example.com:not-a-port"].map((dns): [unknown, string] => [
        { network: { proxy: { ...PROXY, dns } } },
        `Expecting one of:\n    AddressString\n    boolean\nat network.proxy.1.dns but instead got: "${dns}"`,
      ]),
      [
        { network: { proxy: { ...PROXY, dns: 123 } } },
        "Expecting one of:\n    AddressString\n    boolean\nat network.proxy.1.dns but instead got: 123",
      ],
    ];
    for (const [body, message] of cases) {
      const answer = await patch(body);
      expect([answer.status, answer.text, answer.type], JSON.stringify(body)).toEqual([
        400,
        PREFIX + message,
        "text/plain; charset=utf-8",
      ]);
    }
    expect(await hostConfig()).toEqual({ network: { hostname: "before", proxy: PROXY } });
    // A merged proxy must be whole: without a current one, a partial proxy lacks its type.
    await patch({ network: { proxy: {} } });
    const partial = await patch({ network: { proxy: { ip: "10.0.0.9", port: 1080 } } });
    expect([partial.status, partial.text]).toEqual([
      400,
      `${PREFIX}${TYPES}at network.proxy.0.0.type but instead got: undefined`,
    ]);
    expect(await hostConfig()).toEqual({ network: { hostname: "before" } });
  });

  // redsocks' local_ip and local_port are the supervisor's to set (host-config/proxy.ts
  // disallowedProxyFields): dropped, while the rest of the PATCH applies.
  it("drops local_ip and local_port and applies the rest; a proxy of only those stays as it is", async () => {
    const answer = await patch({
      network: { hostname: "local", proxy: { ...PROXY, port: 1082, local_ip: "0.0.0.0", local_port: 9 } },
    });
    expect([answer.status, answer.text]).toEqual([200, "OK"]);
    expect(await hostConfig()).toEqual({ network: { hostname: "local", proxy: { ...PROXY, port: 1082 } } });
    const only = await patch({
      network: { hostname: "local-2", proxy: { local_ip: "0.0.0.0", local_port: 9 } },
    });
    expect([only.status, only.text]).toEqual([200, "OK"]);
    expect(await hostConfig()).toEqual({ network: { hostname: "local-2", proxy: { ...PROXY, port: 1082 } } });
    await patch({ network: { proxy: {} } });
  });

  it("accepts a host name as the dns address, as the real AddressString does", async () => {
    expect((await patch({ network: { proxy: { ...PROXY, dns: "dns.example.com:5353" } } })).status).toBe(200);
    expect(await hostConfig()).toEqual({
      network: { hostname: "local-2", proxy: { ...PROXY, dns: "dns.example.com:5353" } },
    });
    await patch({ network: { proxy: {} } });
  });

  it("respects the update lock (423 text) unless forced", async () => {
    writeFileSync(join(dir, "updates.lock"), "");
    try {
      const locked = await patch({ network: { hostname: "locked" } });
      expect([locked.status, locked.text]).toEqual([423, "Lockfile exists for { appId: 1, service: main }"]);
      expect((await patch({ network: { hostname: "forced" }, force: true })).status).toBe(200);
      expect(await hostConfig()).toEqual({ network: { hostname: "forced" } });
      // A forced action takes the lock away from the application (update-lock's force).
      expect((await patch({ network: { hostname: "unforced" } })).status).toBe(200);
    } finally {
      rmSync(join(dir, "updates.lock"), { force: true });
    }
  });

  it("keeps the host config across a restart of the process", async () => {
    await patch({ network: { hostname: "persisted", proxy: PROXY } });
    expect(await device.stop()).toBe(0);
    await start();
    expect(await hostConfig()).toEqual({ network: { hostname: "persisted", proxy: PROXY } });
  });
});

// proxy.dns came with supervisor 16.6.0; an older one strips it like any member it does not know.
describe("fleetgate supervisor --supervisor-version 16.5.0: host config without proxy.dns", () => {
  const { device } = unmanagedDevice("--supervisor-version", "16.5.0");

  it("drops proxy.dns, valid or not", async () => {
    const call = client(device);
    for (const dns of ["1.1.1.1:53", "resolver"]) {
      const answer = await call("PATCH", "/v1/device/host-config", {
        body: { network: { proxy: { ...PROXY, dns } } },
      });
      expect([answer.status, answer.text]).toEqual([200, "OK"]);
      expect((await call("GET", "/v1/device/host-config")).json()).toEqual({
        network: { hostname: device.uuid.slice(0, 7), proxy: PROXY },
      });
    }
  });
});
