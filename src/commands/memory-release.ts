import { performance } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "pino";

const MiB = 1024 * 1024;

/**
 * glibc's malloc keeps what a process frees for its next allocations, in an arena for each thread
 * that allocated while another did: a busy server's network buffers, the backing stores of
 * collected ArrayBuffers, and the embedded database's compilation (V8 compiles PGlite's WebAssembly
 * on its worker threads, with about 100 MiB of scratch memory). `malloc_trim` gives it back to the
 * system. Node has no binding for it, so it is reached through koffi's FFI; where there is no glibc
 * (macOS, musl) nothing is done.
 */
async function mallocTrim(): Promise<(() => void) | undefined> {
  if (process.platform !== "linux") return undefined;
  try {
    const { default: koffi } = await import("koffi");
    const trim = koffi.load("libc.so.6").func("int malloc_trim(size_t pad)") as (pad: number) => number;
    return () => void trim(0);
  } catch {
    return undefined;
  }
}

/**
 * V8 gives its heap's free pages back through its memory reducer, which a full collection starts.
 * A heap that grew in a burst and then went quiet (the demo seed or a catalogue import run inside
 * the server, a first start's migrations) makes no further full collection, so it kept the burst's
 * pages for good: 35 MiB of the embedded server's 72 MiB heap were free a minute after the demo
 * seed. So when the heap has grown by `GROWTH_BYTES` since it was last seen smallest and the event
 * loop was idle over the interval, the server makes one full collection (10–45 ms for this heap)
 * and leaves the reducer to give the pages back, incrementally, in the seconds after. Under load
 * the loop is busy and V8 collects by itself.
 */
const GROWTH_BYTES = 16 * MiB;
const IDLE_UTILIZATION = 0.05;

/** V8's `gc`, which Node exposes only to contexts made while `--expose-gc` is set. */
function fullCollection(): (() => void) | undefined {
  // Started with --expose-gc: the flag stays as it was given.
  if (typeof globalThis.gc === "function") return globalThis.gc;
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  } finally {
    // Contexts made from now on (a test runner's, a library's `vm`) see no `gc`, as before.
    setFlagsFromString("--no-expose-gc");
  }
}

function heapReducer(logger: Logger): () => void {
  const gc = fullCollection();
  let smallest = getHeapStatistics().total_heap_size;
  let loop = performance.eventLoopUtilization();
  return () => {
    const { total_heap_size: total, used_heap_size: used } = getHeapStatistics();
    const since = performance.eventLoopUtilization(loop);
    loop = performance.eventLoopUtilization();
    smallest = Math.min(smallest, total);
    if (!gc || total - smallest < GROWTH_BYTES || since.utilization > IDLE_UTILIZATION) return;
    const started = performance.now();
    gc();
    // The next collection waits for the heap to grow as much again from what the reducer leaves.
    smallest = total;
    logger.debug(
      { heapMiB: Math.round(total / MiB), usedMiB: Math.round(used / MiB), ms: performance.now() - started },
      "a full collection, so that V8 gives the heap's free pages back",
    );
  };
}

/**
 * Gives freed memory back to the system every `intervalMs`, the first time `intervalMs` after the
 * start: what malloc keeps, and V8's free heap pages after a burst (`heapReducer`). Loading the FFI
 * and the first trim stay off the first requests' path.
 */
export function releaseFreedMemory(intervalMs: number, logger: Logger): void {
  if (intervalMs === 0) return;
  const reduceHeap = heapReducer(logger);
  let trim: Promise<(() => void) | undefined> | undefined;
  const timer = setInterval(async () => {
    reduceHeap();
    if (!trim) {
      trim = mallocTrim();
      if (!(await trim)) logger.debug("no glibc malloc_trim here: freed memory stays with the allocator");
    }
    (await trim)?.();
  }, intervalMs);
  // It does not keep the process alive.
  timer.unref();
}
