import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { trustProxyOption } from "../../src/http/trust-proxy.ts";

// TRUST_PROXY: whether X-Forwarded-For names the client (request.ip, which the login throttle
// counts and the request log records). test/auth/login-under-attack.test.ts drives it through /login_.

const trustProxy = (value?: string) =>
  loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;

describe("TRUST_PROXY", () => {
  it("is off by default", () => {
    expect(trustProxy()).toBe(false);
    expect(trustProxy("")).toBe(false);
    expect(trustProxy("false")).toBe(false);
  });

  it("takes true, a number of proxies, or a list of addresses and ranges", () => {
    expect(trustProxy("true")).toBe(true);
    expect(trustProxy("2")).toBe(2);
    expect(trustProxy("10.0.0.0/8, 192.168.1.7,2001:db8::/32 ,::1,loopback")).toEqual([
      "10.0.0.0/8",
      "192.168.1.7",
      "2001:db8::/32",
      "::1",
      "loopback",
    ]);
  });

  it.each(["yes", "10.0.0.0/33", "2001:db8::/129", "10.0.0.1,", "10.0.0.0/8/8", "lb.internal", "-1"])(
    "refuses %j, naming the variable",
    (value) => {
      expect(() => trustProxy(value)).toThrow(/TRUST_PROXY: must be true, false, a number of proxies/);
    },
  );
});

describe("request.ip under each TRUST_PROXY", () => {
  /** The client address fastify sees for a request from `remoteAddress` with this X-Forwarded-For. */
  async function clientIp(value: string | undefined, remoteAddress: string, forwardedFor: string) {
    const app = Fastify({ trustProxy: trustProxyOption(trustProxy(value)) });
    app.get("/ip", async (request) => request.ip);
    try {
      const response = await app.inject({
        url: "/ip",
        remoteAddress,
        headers: { "x-forwarded-for": forwardedFor },
      });
      return response.body;
    } finally {
      await app.close();
    }
  }

  it("ignores X-Forwarded-For when unset", async () => {
    expect(await clientIp(undefined, "10.0.0.2", "203.0.113.9")).toBe("10.0.0.2");
  });

  it("takes its first address when true, whoever sent it", async () => {
    expect(await clientIp("true", "10.0.0.2", "198.51.100.1, 203.0.113.9")).toBe("198.51.100.1");
  });

  it("skips the given number of proxies, counting the connection's", async () => {
    expect(await clientIp("1", "10.0.0.2", "198.51.100.1, 203.0.113.9")).toBe("203.0.113.9");
    expect(await clientIp("2", "10.0.0.2", "198.51.100.1, 203.0.113.9, 10.0.0.3")).toBe("203.0.113.9");
  });

  it("trusts the header only from the listed proxies", async () => {
    const proxies = "10.0.0.0/8";
    expect(await clientIp(proxies, "10.0.0.2", "203.0.113.9")).toBe("203.0.113.9");
    // A proxy behind a proxy is skipped as well; an untrusted address on the way is the client.
    expect(await clientIp(proxies, "10.0.0.2", "203.0.113.9, 10.1.2.3")).toBe("203.0.113.9");
    expect(await clientIp(proxies, "10.0.0.2", "198.51.100.1, 203.0.113.9")).toBe("203.0.113.9");
    // A client that connects directly cannot name another address.
    expect(await clientIp(proxies, "203.0.113.5", "198.51.100.1")).toBe("203.0.113.5");
  });
});
