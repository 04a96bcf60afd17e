// One load process of bench/devices-load-processes.ts: `node --import tsx bench/devices-load-child.ts`
// with an IPC channel. It answers each request of its parent in turn and ends on SIGTERM.

import { SimulatedDevices } from "./devices-load.ts";
import type { LoadReply, LoadRequest } from "./devices-load-processes.ts";

let devices: SimulatedDevices | undefined;

async function answer(request: LoadRequest): Promise<unknown> {
  if (request.op === "init") {
    devices = new SimulatedDevices(request.seeded, request.connections, request.changeEvery, {
      index: request.index,
      of: request.of,
    });
    return null;
  }
  if (!devices) throw new Error("not initialised");
  if (request.op === "prime")
    return devices.prime(request.bases, request.api, request.concurrency, request.count);
  return devices.runRaw(request.bases, request.api, request.rates, request.seconds);
}

process.on("message", (request: LoadRequest) => {
  answer(request).then(
    (result) => process.send?.({ ok: true, result } satisfies LoadReply),
    (error: unknown) => process.send?.({ ok: false, error: String(error) } satisfies LoadReply),
  );
});
process.on("SIGTERM", () => {
  void devices?.close();
  process.exit(0);
});
