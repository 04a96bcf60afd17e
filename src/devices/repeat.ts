import { MAX_TIMER_MS } from "../config.ts";

export interface Repeating {
  stop(): void;
}

/**
 * Runs `task` every `periodMs`, each run starting a period after the last one ended (runs never
 * overlap). Node fires a timer longer than 2^31-1 ms after 1 ms, so a longer period waits in
 * steps. The timers do not keep the process alive.
 */
export function repeatEvery(periodMs: number, task: () => Promise<void>): Repeating {
  if (!(periodMs >= 1)) throw new RangeError(`a period must be at least 1 ms, not ${periodMs}`);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const wait = (remainingMs: number) => {
    if (stopped) return;
    const step = Math.min(remainingMs, MAX_TIMER_MS);
    timer = setTimeout(() => {
      if (remainingMs > step) wait(remainingMs - step);
      else void task().finally(() => wait(periodMs));
    }, step);
    timer.unref();
  };
  wait(periodMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
