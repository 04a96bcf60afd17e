// A stand-in for many simulated devices in one small process: `node --import tsx
// bench/device-stand-in.ts <ports> [delayMs]` listens on <ports> loopback ports and answers every
// request with 200 "OK" (after delayMs), as a supervisor answers GET /ping. Used by bench/jobs.ts
// for fleets larger than `fleetgate fleet` can run here (one port and data dir per device). Prints
// the ports as one JSON line once every one listens.

import { createServer, type Server } from "node:http";

const ports = Number(process.argv[2] ?? "1000");
const delayMs = Number(process.argv[3] ?? "0");

const answer: Parameters<typeof createServer>[1] = (request, response) => {
  const send = () => {
    const keyed = request.url?.includes("apikey=") === true;
    response.writeHead(keyed ? 200 : 401, { "content-type": "text/plain" });
    response.end(keyed ? "OK" : "Unauthorized");
  };
  if (delayMs > 0) setTimeout(send, delayMs);
  else send();
};

const servers: Server[] = [];
const listening = await Promise.all(
  Array.from(
    { length: ports },
    () =>
      new Promise<number>((resolve, reject) => {
        const server = createServer({ keepAliveTimeout: 60_000 }, answer);
        servers.push(server);
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
      }),
  ),
);
process.stdout.write(`${JSON.stringify(listening)}\n`);
process.on("SIGTERM", () => {
  for (const server of servers) server.close();
  for (const server of servers) server.closeAllConnections();
  process.exit(0);
});
