import type { Logger } from "pino";

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
 * Gives the memory malloc keeps after frees back to the system every `intervalMs`, the first time
 * `intervalMs` after the start: loading the FFI and the first trim stay off the first requests' path.
 */
export function releaseFreedMemory(intervalMs: number, logger: Logger): void {
  if (intervalMs === 0) return;
  let trim: Promise<(() => void) | undefined> | undefined;
  const timer = setInterval(async () => {
    trim ??= mallocTrim();
    const found = await trim;
    if (found) return found();
    clearInterval(timer);
    logger.debug("no glibc malloc_trim here: freed memory stays with the allocator");
  }, intervalMs);
  // It does not keep the process alive.
  timer.unref();
}
