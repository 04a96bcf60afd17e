import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));

/** One `--json` line of `fleetgate fleet`. */
export interface FleetDevice {
  uuid: string;
  port: number;
  apiKey: string;
}

/** A real `fleetgate fleet … --json` process; resolves once `expected` device lines arrived. */
export function startFleet(
  args: string[],
  expected: number,
  timeoutMs = 90_000,
): Promise<{ child: ChildProcess; devices: FleetDevice[] }> {
  const child = spawn(process.execPath, [bin, "fleet", ...args, "--json"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`fleet did not start:\n${stdout}\n${stderr.slice(-2000)}`)),
      timeoutMs,
    );
    const exitedEarly = (code: number | null) =>
      reject(new Error(`fleet exited with ${code}:\n${stdout}\n${stderr.slice(-2000)}`));
    child.once("exit", exitedEarly);
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const lines = stdout.split("\n").filter(Boolean);
      if (lines.length >= expected) {
        clearTimeout(timer);
        child.off("exit", exitedEarly);
        resolve({ child, devices: lines.map((line) => JSON.parse(line)) });
      }
    });
  });
}

/** SIGTERM, and the exit code the fleet stopped with. */
export function stopFleet(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}
