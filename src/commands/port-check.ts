import { createServer } from "node:net";

/** What an operator should change when the server cannot listen where it was told to. */
export function listenFailure(error: unknown, host: string, port: number): Error | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE")
    return new Error(
      `Port ${port} on ${host} is already in use by another process (another fleetgate serve?): stop it, or set PORT to a free port`,
    );
  if (code === "EACCES")
    return new Error(
      `Listening on port ${port} of ${host} needs privileges this process lacks: set PORT to 1024 or above`,
    );
  if (code === "EADDRNOTAVAIL")
    return new Error(
      `${host} is not an address of this machine: set HOST to one of its addresses (or 0.0.0.0)`,
    );
  return undefined;
}

/**
 * Fails when the server could not listen at host:port, before a first start changes anything
 * (migrations, the admin and its one-time password, the catalogue): a second server started by
 * mistake then stops at once and says which setting to change. Port 0 (any free port) always can.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", (error) => reject(listenFailure(error, host, port) ?? error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
