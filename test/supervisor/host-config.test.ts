import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, removeDir, type SupervisorProcess, tempDir, unmanaged } from "./supervisor-process.ts";

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
  const dir = tempDir();
  let device: SupervisorProcess;
  let call: ReturnType<typeof client>;
  const hostConfig = async () => (await call("GET", "/v1/device/host-config")).json();
  const patch = (body: unknown) => call("PATCH", "/v1/device/host-config", { body });
  beforeAll(async () => {
    device = await unmanaged(dir);
    call = client(device);
  });
  afterAll(async () => {
    await device.stop();
    removeDir(dir);
  });

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
    expect((await patch({ network: { proxy: http } })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-2", proxy: http } });
    expect((await patch({ network: {} })).status).toBe(200);
    expect(await hostConfig()).toEqual({ network: { hostname: "kiosk-2", proxy: http } });
  });

  it("resets: proxy null or {} to no proxy, hostname null or '' to the uuid's first 7 characters", async () => {
    const hostname = device.uuid.slice(0, 7);
    for (const proxy of [null, {}]) {
      await patch({ network: { proxy: PROXY } });
      expect((await patch({ network: { proxy } })).status).toBe(200);
      expect(((await hostConfig()) as { network: object }).network).not.toHaveProperty("proxy");
    }
    for (const reset of [null, ""]) {
      await patch({ network: { hostname: "named" } });
      expect((await patch({ network: { hostname: reset } })).status).toBe(200);
      expect(await hostConfig()).toEqual({ network: { hostname } });
    }
  });

  it("refuses invalid input with 400 text naming the member, and changes nothing", async () => {
    await patch({ network: { hostname: "before" } });
    const cases: [unknown, string][] = [
      [
        {},
        "Expecting Partial<{| proxy: ({ [K in string]: any } & Partial<{ dns: (AddressString | boolean) }>), hostname: string |}> at network but instead got: undefined",
      ],
      [{ network: { hostname: 123 } }, "Expecting string at network.hostname but instead got: 123"],
      [{ network: { proxy: "socks5" } }, 'Expecting object at network.proxy but instead got: "socks5"'],
      [
        { network: { proxy: { ...PROXY, type: "socks6" } } },
        'Expecting "socks4" | "socks5" | "http-connect" | "http-relay" at network.proxy.type but instead got: "socks6"',
      ],
      [
        { network: { proxy: { ...PROXY, ip: 5 } } },
        "Expecting string at network.proxy.ip but instead got: 5",
      ],
      [
        { network: { proxy: { ...PROXY, port: "1080" } } },
        'Expecting integer at network.proxy.port but instead got: "1080"',
      ],
      [
        { network: { proxy: { ...PROXY, port: 10.5 } } },
        "Expecting integer at network.proxy.port but instead got: 10.5",
      ],
      [
        { network: { proxy: { ...PROXY, login: 1 } } },
        "Expecting string at network.proxy.login but instead got: 1",
      ],
      [
        { network: { proxy: { ...PROXY, noProxy: "10.0.0.1" } } },
        'Expecting Array<IP | CIDR> at network.proxy.noProxy but instead got: "10.0.0.1"',
      ],
      [
        { network: { proxy: { ...PROXY, noProxy: ["10.0.0.1", "10.0.0.0/33"] } } },
        'Expecting IP | CIDR at network.proxy.noProxy.1 but instead got: "10.0.0.0/33"',
      ],
      [{ network: { proxy: { ...PROXY, dns: true } } }, "Unknown member at network.proxy.dns"],
      [{ network: { hostname: "x", mtu: 1400 } }, "Unknown member at network.mtu"],
    ];
    for (const [body, message] of cases) {
      const answer = await patch(body);
      expect([answer.status, answer.text, answer.type]).toEqual([
        400,
        PREFIX + message,
        "text/plain; charset=utf-8",
      ]);
    }
    expect(await hostConfig()).toEqual({ network: { hostname: "before" } });
  });

  it("respects the update lock (423 text) unless forced", async () => {
    writeFileSync(join(dir, "updates.lock"), "");
    try {
      const locked = await patch({ network: { hostname: "locked" } });
      expect([locked.status, locked.text]).toEqual([423, "Lockfile exists for { appId: 1, service: main }"]);
      expect((await patch({ network: { hostname: "forced" }, force: true })).status).toBe(200);
      expect(await hostConfig()).toEqual({ network: { hostname: "forced" } });
    } finally {
      rmSync(join(dir, "updates.lock"));
    }
  });

  it("keeps the host config across a restart of the process", async () => {
    await patch({ network: { hostname: "persisted", proxy: PROXY } });
    expect(await device.stop()).toBe(0);
    device = await unmanaged(dir);
    call = client(device);
    expect(await hostConfig()).toEqual({ network: { hostname: "persisted", proxy: PROXY } });
  });
});
