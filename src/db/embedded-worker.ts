// The embedded database's own thread: PGlite runs each statement to its end without yielding, so it
// runs here, and the server's thread goes on answering (/ping, the next request's parse) while a
// statement runs. It serves ./embedded-thread.ts's requests; PGlite still takes them one at a time.
// Node runs this file on its own (type stripping), from the sources and from the build alike.
import { parentPort, workerData } from "node:worker_threads";
import { messages, PGlite, type Transaction } from "@electric-sql/pglite";
import {
  databaseErrorFields,
  type EmbeddedFailure,
  type EmbeddedReply,
  type EmbeddedRequest,
  type EmbeddedStart,
} from "./embedded-protocol.ts";

const port = parentPort;
if (!port) throw new Error("embedded-worker.ts runs as a worker thread of the server");
const post = (reply: EmbeddedReply) => port.postMessage(reply);

function failure(error: unknown): EmbeddedFailure {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  if (!(error instanceof messages.DatabaseError)) return { name: error.name, message: error.message };
  const fields: Record<string, string | number | undefined> = {};
  for (const field of databaseErrorFields) fields[field] = (error as unknown as typeof fields)[field];
  return { name: error.name, message: error.message, database: fields };
}

interface OpenTransaction {
  readonly tx: Transaction;
  readonly end: (outcome: "commit" | "rollback") => void;
  /** Settles when PGlite has committed or rolled back. */
  readonly settled: Promise<void>;
  /** Its statements, one after another in the order they were sent. */
  chain: Promise<unknown>;
}

const rolledBack = Symbol("rolled back");
const start = workerData as EmbeddedStart;
const transactions = new Map<number, OpenTransaction>();
const listeners = new Map<number, () => Promise<void>>();

function begin(pglite: PGlite, id: number): Promise<void> {
  return new Promise((opened, failed) => {
    let end: OpenTransaction["end"] = () => {};
    const ended = new Promise<"commit" | "rollback">((resolve) => {
      end = resolve;
    });
    const settled = pglite
      .transaction(async (tx) => {
        transactions.set(id, { tx, end, settled, chain: Promise.resolve() });
        opened();
        // PGlite commits when this returns and rolls back when it throws.
        if ((await ended) === "rollback") throw rolledBack;
      })
      .then(
        () => {},
        (error: unknown) => {
          if (error !== rolledBack) throw error;
        },
      )
      .finally(() => transactions.delete(id));
    // A BEGIN that failed never opened: its error answers the request.
    settled.catch(failed);
  });
}

/** Runs `work` on an open transaction, after the statements sent on it before. */
function inTransaction<T>(transaction: number, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const open = transactions.get(transaction);
  if (!open) return Promise.reject(new Error("Transaction is closed"));
  const next = open.chain.then(() => work(open.tx));
  open.chain = next.catch(() => {});
  return next;
}

/** Runs `work` in its transaction, or at once outside one (PGlite then waits for an open one). */
function on<T>(
  pglite: PGlite,
  transaction: number | undefined,
  work: (queries: PGlite | Transaction) => Promise<T>,
): Promise<T> {
  return transaction === undefined ? work(pglite) : inTransaction(transaction, work);
}

const rawText = (value: string) => value;

async function serve(pglite: PGlite, request: EmbeddedRequest): Promise<unknown> {
  switch (request.op) {
    case "query": {
      // Only when asked: options with parsers cost PGlite a copy of its own for every statement.
      const parsers = request.rawTypes && Object.fromEntries(request.rawTypes.map((type) => [type, rawText]));
      return on(pglite, request.transaction, (queries) =>
        queries.query(request.text, [...request.values], {
          ...(request.rowMode ? { rowMode: request.rowMode } : {}),
          ...(request.paramTypes ? { paramTypes: [...request.paramTypes] } : {}),
          ...(parsers ? { parsers } : {}),
        }),
      );
    }
    case "exec":
      return on(pglite, request.transaction, (queries) => queries.exec(request.text));
    case "begin":
      return begin(pglite, request.id);
    case "rollback":
      return inTransaction(request.transaction, (tx) => tx.rollback());
    case "end": {
      const open = transactions.get(request.transaction);
      if (!open) throw new Error("Transaction is closed");
      await open.chain;
      open.end(request.outcome);
      return open.settled;
    }
    case "listen": {
      const stop = await pglite.listen(request.channel, (payload) =>
        post({ kind: "notification", listener: request.id, payload }),
      );
      listeners.set(request.id, stop);
      return undefined;
    }
    case "unlisten": {
      const stop = listeners.get(request.listener);
      listeners.delete(request.listener);
      return stop?.();
    }
    case "close":
      await pglite.close();
      return undefined;
  }
}

try {
  const pglite = await PGlite.create(start.dataDir, {
    startParams: [...start.startParams],
    pgliteWasmModule: start.modules.pglite,
    initdbWasmModule: start.modules.initdb,
  });
  await pglite.exec("SET TimeZone = 'UTC'");
  port.on("message", (request: EmbeddedRequest) => {
    serve(pglite, request).then(
      (value) => post({ kind: "answer", id: request.id, value }),
      (error: unknown) => post({ kind: "error", id: request.id, error: failure(error) }),
    );
  });
  post({ kind: "ready" });
} catch (error) {
  post({ kind: "failed", error: failure(error) });
}
