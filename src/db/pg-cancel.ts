import "./pg-navigator.ts";
import pg from "pg";
import "./pg-navigator-end.ts";

// What pg's Client keeps of its backend (set from BackendKeyData) but does not type.
interface BackendKey {
  readonly host: string;
  readonly port: number;
  readonly processID: number | null;
  readonly secretKey: number | null;
}

// pg's Connection can send a CancelRequest; @types/pg leaves these out.
interface CancelConnection {
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  end(): void;
  on(event: "connect" | "end" | "error", listener: () => void): void;
}

// A cancel request that gets no answer (the server is gone) is given up after this long.
const GIVE_UP_MS = 2_000;

/**
 * Asks the server to cancel what `client`'s backend is running, the way pg's own `Client.cancel`
 * does: a CancelRequest on a short connection of its own, which needs no pool slot and no login.
 * Resolves once the server has taken the request (it closes that connection), so the caller can
 * release `client` knowing the cancel cannot land on a statement someone else sends next. Behind
 * PgBouncer the request goes to PgBouncer, which forwards it to the server connection serving
 * `client` then (or drops it when none is); PgBouncer 1.18 closes the request's connection before
 * forwarding it, so there a cancel that crosses the end of its statement can stop the next one
 * that server connection runs, another client's.
 */
export function cancelBackend(client: pg.PoolClient): Promise<void> {
  const key = client as unknown as BackendKey;
  const { processID, secretKey } = key;
  if (processID === null || secretKey === null) return Promise.resolve();
  return new Promise((resolve) => {
    const connection = new pg.Connection() as unknown as CancelConnection;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      connection.end();
      done();
    }, GIVE_UP_MS);
    connection.on("connect", () => connection.cancel(processID, secretKey));
    connection.on("end", done);
    connection.on("error", done);
    if (key.host.startsWith("/")) connection.connect(`${key.host}/.s.PGSQL.${key.port}`);
    else connection.connect(key.port, key.host);
  });
}
