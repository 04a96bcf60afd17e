import { BlockList, isIP } from "node:net";

// The proxy calls only addresses in these networks, so a device that reports a foreign address
// cannot turn it against other hosts. Loopback and the private ranges by default.
export const defaultNetworks = [
  "127.0.0.0/8",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "::1/128",
  "fc00::/7",
];

export class NetworkGuard {
  private readonly allowed = new BlockList();

  constructor(networks: readonly string[]) {
    for (const network of networks) {
      const [address, prefix] = network.split("/");
      const family = isIP(address ?? "");
      if (!address || !family || prefix === undefined) throw new Error(`not a network: ${network}`);
      this.allowed.addSubnet(address, Number(prefix), family === 6 ? "ipv6" : "ipv4");
    }
  }

  /** Only IP literals inside an allowed network (a name could resolve anywhere). */
  allows(address: string | null): boolean {
    const family = isIP(address ?? "");
    return family !== 0 && this.allowed.check(address as string, family === 6 ? "ipv6" : "ipv4");
  }
}
