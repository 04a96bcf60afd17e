import type { ChildProcess } from "node:child_process";
import { spawnFleetgate } from "../processes.ts";

/** One `--json` line of `fleetgate fleet`. */
export interface FleetDevice {
  uuid: string;
  port: number;
  apiKey: string;
}

/** A real `fleetgate fleet … --json` process; resolves once `expected` device lines arrived. */
export async function startFleet(
  args: string[],
  expected: number,
  timeoutMs = 90_000,
): Promise<{ child: ChildProcess; devices: FleetDevice[] }> {
  const { child, ready } = await spawnFleetgate(["fleet", ...args, "--json"], {
    what: "fleet",
    timeoutMs,
    ready: (out) => {
      const lines = out.split("\n").filter(Boolean);
      return lines.length >= expected ? lines.map((line) => JSON.parse(line) as FleetDevice) : undefined;
    },
  });
  return { child, devices: ready };
}

/** SIGTERM, and the exit code the fleet stopped with. */
export function stopFleet(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}
