import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import { createLogger, lazyRequestLogger } from "../src/logger.ts";

// Issue 28: fastify made a pino child logger (its bindings serialized and redacted) for every
// request, even at LOG_LEVEL=silent. A request's logger now makes its child on its first line.

function logged(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe("a request's logger", () => {
  it("makes no child while it writes nothing, or only below the level", () => {
    const { logger, lines, children } = logged("warn");
    const log = lazyRequestLogger(logger as unknown as FastifyBaseLogger, { reqId: "r1" }, {});
    log.info({ status: 200 }, "request");
    log.debug("details");
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
    expect(log.level).toBe("warn");
  });

  it("writes with the request's bindings, through one child, once a line is at the level", () => {
    const { logger, lines, children } = logged("info");
    const log = lazyRequestLogger(logger as unknown as FastifyBaseLogger, { reqId: "r2" }, {});
    log.error({ errorId: "r2" }, "unexpected error");
    log.warn("again");
    expect(children()).toBe(1);
    expect(lines).toMatchObject([
      { level: 50, reqId: "r2", errorId: "r2", msg: "unexpected error" },
      { level: 40, reqId: "r2", msg: "again" },
    ]);
  });

  it("stays silent at LOG_LEVEL=silent, errors included", () => {
    const { logger, lines, children } = logged("silent");
    const log = lazyRequestLogger(logger as unknown as FastifyBaseLogger, { reqId: "r3" }, {});
    log.error("unexpected error");
    log.fatal("fatal");
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
  });

  it("takes a route's own level at once, as fastify's own factory would", () => {
    const { logger, lines, children } = logged("warn");
    const log = lazyRequestLogger(
      logger as unknown as FastifyBaseLogger,
      { reqId: "r4" },
      { level: "debug" },
    );
    expect(children()).toBe(1);
    log.debug("shown");
    expect(lines).toMatchObject([{ reqId: "r4", msg: "shown" }]);
  });

  it("follows a level set on it, for itself only", () => {
    const { logger, lines } = logged("warn");
    const log = lazyRequestLogger(logger as unknown as FastifyBaseLogger, { reqId: "r5" }, {});
    log.level = "info";
    log.info("now shown");
    expect(lines).toMatchObject([{ reqId: "r5", msg: "now shown" }]);
    expect(logger.level).toBe("warn");
  });
});
