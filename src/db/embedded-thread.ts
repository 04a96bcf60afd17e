import { readFile } from "node:fs/promises";
import { setFlagsFromString } from "node:v8";
import { Worker } from "node:worker_threads";
import { messages, type ParserOptions } from "@electric-sql/pglite";
import type { EmbeddedFailure, EmbeddedReply, EmbeddedRequest, EmbeddedStart } from "./embedded-protocol.ts";
import { ConnectionFailed } from "./failures.ts";

// The embedded database on a thread of its own (./embedded-worker.ts). PGlite runs a statement to
// its end without yielding; on the server's thread a slow one held every other request, /ping
// included, for as long as it ran. Here the server's thread only sends the statement and receives
// its rows. The methods are PGlite's, for the callers written for it: the executor (./embedded.ts),
// Prisma's and pg-boss's PGlite adapters.

// PGlite's WebAssembly (PostgreSQL, 9 MiB, and initdb), compiled once a process: V8 shares a compiled
// module between threads, where each database's thread compiling its own added 0.8 s to every open.
let compiling: Promise<EmbeddedStart["modules"]> | undefined;
function compiledModules(): Promise<EmbeddedStart["modules"]> {
  compiling ??= (async () => {
    const compile = async (file: string) =>
      WebAssembly.compile(await readFile(new URL(file, import.meta.resolve("@electric-sql/pglite"))));
    const [pglite, initdb] = await Promise.all([compile("./pglite.wasm"), compile("./initdb.wasm")]);
    return { pglite, initdb };
  })();
  compiling.catch(() => {
    compiling = undefined;
  });
  return compiling;
}

/** A statement's result, as PGlite gives it. */
export interface EmbeddedResults<Row> {
  readonly rows: Row[];
  readonly fields: readonly { readonly name: string; readonly dataTypeID: number }[];
  readonly affectedRows?: number;
}

interface QueryOptions {
  readonly rowMode?: "array" | "object";
  readonly parsers?: ParserOptions;
  readonly paramTypes?: number[];
}

/** What runs statements: the database, or one of its transactions. */
export interface EmbeddedQueries {
  query<Row>(text: string, values?: unknown[], options?: QueryOptions): Promise<EmbeddedResults<Row>>;
  exec(text: string): Promise<EmbeddedResults<Record<string, unknown>>[]>;
}

export interface EmbeddedTransaction extends EmbeddedQueries {
  rollback(): Promise<void>;
}

export interface EmbeddedConnection extends EmbeddedQueries {
  transaction<T>(work: (tx: EmbeddedTransaction) => Promise<T>): Promise<T>;
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The request of an op, without the id the thread gives it. */
type Unnumbered<R> = R extends unknown ? Omit<R, "id"> : never;

function errorOf(failure: EmbeddedFailure): Error {
  if (!failure.database) return Object.assign(new Error(failure.message), { name: failure.name });
  // A DatabaseError, as PGlite raises it on its own thread: the error table (core/client-errors.ts)
  // reads its SQLSTATE and detail, Prisma's adapter its class.
  const { length, ...fields } = failure.database;
  return Object.assign(new messages.DatabaseError(failure.message, Number(length ?? 0), "error"), fields);
}

/** Applies the caller's parsers to the values the thread sent back as text. */
function parsed<Row>(
  results: EmbeddedResults<Row>,
  parsers: ParserOptions,
  rowMode: QueryOptions["rowMode"],
): EmbeddedResults<Row> {
  const columns = results.fields.flatMap(({ name, dataTypeID }, index) => {
    if (!(dataTypeID in parsers)) return [];
    return [{ key: rowMode === "array" ? index : name, parse: parsers[dataTypeID] }];
  });
  if (columns.length === 0) return results;
  for (const row of results.rows as Record<string | number, unknown>[]) {
    for (const { key, parse } of columns) {
      const value = row[key];
      if (typeof value === "string") row[key] = parse(value);
    }
  }
  return results;
}

// The thread's young generation: each statement's rows and messages are garbage at once, and a few
// MiB hold them (8 concurrent reads measured: the same statements a second, 37 MiB less resident).
const resourceLimits = { maxYoungGenerationSizeMb: 3 };

/** `--max-semi-space-size=N` as the process was started with it (bin/fleetgate.js, npm start), or 0. */
function semiSpaceFlag(): number {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  const found = flags.filter((flag) => /^--max[-_]semi[-_]space[-_]size=\d+$/.test(flag)).at(-1);
  return found ? Number(found.split("=")[1]) : 0;
}

/**
 * Makes a worker whose heap takes its own `resourceLimits`. V8's flags belong to the process, and
 * the server's `--max-semi-space-size=16` (set for the server's own heap) would otherwise give the
 * thread 32 MiB of young generation too: V8 reads the flag before a heap's own limits. So the flag
 * is unset while the worker's heap is made (by its 'online' event) and set back then.
 */
function withSmallYoungGeneration(make: () => Worker): Worker {
  const flag = semiSpaceFlag();
  if (flag === 0) return make();
  let unset = true;
  const restore = () => {
    if (unset) setFlagsFromString(`--max-semi-space-size=${flag}`);
    unset = false;
  };
  setFlagsFromString("--max-semi-space-size=0");
  try {
    const worker = make();
    for (const event of ["online", "error", "exit"]) worker.once(event, restore);
    return worker;
  } catch (error) {
    restore();
    throw error;
  }
}

/** Starts the embedded database on its own thread; resolves when it is open. */
export async function startEmbeddedThread(
  start: Omit<EmbeddedStart, "modules">,
): Promise<EmbeddedConnection> {
  const workerData: EmbeddedStart = { ...start, modules: await compiledModules() };
  const worker = withSmallYoungGeneration(
    () => new Worker(new URL("./embedded-worker.ts", import.meta.url), { workerData, resourceLimits }),
  );
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<number, (payload: string) => void>();
  let lastId = 0;
  let stopped: Error | undefined;

  // The thread keeps the process alive only while a statement is out: a server's sockets keep it
  // running, and a command ends when its last statement has been answered, as on PGlite itself.
  const settle = () => {
    if (waiting.size === 0) worker.unref();
  };
  const stop = (reason: Error) => {
    stopped ??= reason;
    for (const { reject } of waiting.values()) reject(stopped);
    waiting.clear();
    settle();
  };

  const opened = new Promise<void>((resolve, reject) => {
    worker.on("message", (reply: EmbeddedReply) => {
      switch (reply.kind) {
        case "ready":
          return resolve();
        case "failed":
          return reject(errorOf(reply.error));
        case "notification":
          return listeners.get(reply.listener)?.(reply.payload);
        case "answer":
        case "error": {
          const asked = waiting.get(reply.id);
          waiting.delete(reply.id);
          if (reply.kind === "answer") asked?.resolve(reply.value);
          else asked?.reject(errorOf(reply.error));
          return settle();
        }
      }
    });
    worker.on("error", (error) => {
      reject(error);
      stop(new ConnectionFailed({ cause: error }));
    });
    worker.on("exit", (code) => {
      const ended = new Error(`the embedded database's thread ended (exit code ${code})`);
      reject(ended);
      stop(new ConnectionFailed({ cause: ended }));
    });
  });
  await opened.catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  worker.unref();

  function send<T>(id: number, request: Unnumbered<EmbeddedRequest>): Promise<T> {
    if (stopped) return Promise.reject(stopped);
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.ref();
      worker.postMessage({ ...request, id } as EmbeddedRequest);
    });
  }
  const ask = <T>(request: Unnumbered<EmbeddedRequest>) => send<T>(++lastId, request);

  function queriesIn(transaction: number | undefined): EmbeddedQueries {
    return {
      async query<Row>(text: string, values: unknown[] = [], options: QueryOptions = {}) {
        const { rowMode, parsers, paramTypes } = options;
        const results = await ask<EmbeddedResults<Row>>({
          op: "query",
          transaction,
          text,
          values,
          ...(rowMode ? { rowMode } : {}),
          ...(paramTypes ? { paramTypes } : {}),
          ...(parsers ? { rawTypes: Object.keys(parsers).map(Number) } : {}),
        });
        return parsers ? parsed(results, parsers, rowMode) : results;
      },
      exec: (text) => ask({ op: "exec", transaction, text }),
    };
  }

  return {
    ...queriesIn(undefined),
    // PGlite's transaction: committed when `work` resolves (unless it rolled back), rolled back
    // when it throws. The thread holds it open meanwhile, and runs other statements after it.
    async transaction(work) {
      const transaction = ++lastId;
      await send(transaction, { op: "begin" });
      const end = (outcome: "commit" | "rollback") => ask<void>({ op: "end", transaction, outcome });
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work({
          ...queriesIn(transaction),
          rollback: () => ask({ op: "rollback", transaction }),
        });
      } catch (error) {
        await end("rollback").catch(() => {});
        throw error;
      }
      await end("commit");
      return result;
    },
    async listen(channel, onPayload) {
      const listener = ++lastId;
      listeners.set(listener, onPayload);
      await send(listener, { op: "listen", channel }).catch((error: unknown) => {
        listeners.delete(listener);
        throw error;
      });
      return async () => {
        listeners.delete(listener);
        await ask({ op: "unlisten", listener });
      };
    },
    async close() {
      if (stopped) return;
      await ask({ op: "close" });
      stopped = new ConnectionFailed({ cause: new Error("the embedded database was closed") });
      await worker.terminate();
    },
  };
}
