import type { TrustProxy } from "../config.ts";

type TrustProxyOption = boolean | string[] | ((address: string, hop: number) => boolean);

/**
 * fastify's `trustProxy` for TRUST_PROXY. A number of proxies is Express's hop count, which fastify 5
 * no longer takes (it cannot tell a proxy from a client that connects directly and sends the header
 * itself): the nearest `hops` addresses (the connection's, then X-Forwarded-For's from the right)
 * are proxies, and the one after them is the client. Safe only where clients reach the server
 * through those proxies alone.
 */
export function trustProxyOption(trust: TrustProxy): TrustProxyOption {
  return typeof trust === "number" ? (_address, hop) => hop < trust : trust;
}
