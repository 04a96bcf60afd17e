import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ThrottleEvents } from "../auth/throttle.ts";
import type { StatementCacheStats } from "../core/statement-cache.ts";
import type { Database } from "../db/database.ts";
import { Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { DevicesOnline } from "./devices-online.ts";
import { statementsOf } from "./request-context.ts";
import { RequestMetrics } from "./request-metrics.ts";

// The families and their labels are listed in the README's "Operations" section; a test scrapes
// each of them.

// A route that matched none: one label value, whatever the URL was, so no URL reaches a label; a
// route is counted under its template, never its URL.
const UNMATCHED = "unmatched";

// Process metrics (CPU, memory, event loop, GC, handles) describe the process, not one server: one
// registry for the process, made on first use. A server per test must not add a GC observer each.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricsDeps {
  readonly db: Database;
  readonly model: Model;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  readonly token: string | undefined;
  /** Every outcome of a proxy call, so each reads 0 before it first happens. */
  readonly proxyOutcomes: readonly string[];
  /** The statement caches, by name (OData URLs, query trees). */
  readonly statementCaches: Readonly<Record<string, { readonly stats: StatementCacheStats }>>;
  /** GraphQL operations that ran, by what answered them (src/graphql/execution/answer.ts). */
  readonly graphqlAnswers: { readonly database: number; readonly executor: number };
}

/** Where the other layers report what the HTTP hooks cannot see (wired in server.ts). */
export interface MetricsSinks {
  /** One proxy command: the outcome of each device it went to. */
  readonly proxyCommand: (outcomes: readonly string[]) => void;
  readonly logins: ThrottleEvents;
}

/**
 * `GET /metrics` in the Prometheus text format (prom-client, and ./request-metrics.ts for the request
 * families), on the API's own host and port:
 * HTTP requests, SQL statements per request, the database pool, the proxy, devices online, logins
 * and the process.
 */
export function useMetrics(app: FastifyInstance, deps: MetricsDeps): MetricsSinks {
  const registry = new Registry();
  const registers = [registry];

  // The request families: counted by hand, on every request (./request-metrics.ts).
  const requests = new RequestMetrics();
  // A callback hook, not an async one, on every request: no promise.
  app.addHook("onResponse", (request, reply, done) => {
    requests.observe(
      request.method,
      request.routeOptions.url ?? UNMATCHED,
      reply.statusCode,
      reply.elapsedTime / 1000,
      statementsOf(request),
    );
    done();
  });

  poolMetrics(deps.db, registers);
  new Counter({
    name: "fleetgate_db_statements_total",
    help: "SQL statements sent, by the database that ran them: primary, or replica (DATABASE_REPLICA_URLS)",
    labelNames: ["target"],
    registers,
    collect() {
      this.reset();
      const sent = deps.db.statementsByTarget?.() ?? { primary: 0, replica: 0 };
      this.inc({ target: "primary" }, sent.primary);
      this.inc({ target: "replica" }, sent.replica);
    },
  });
  statementCacheMetrics(deps.statementCaches, registers);
  new Counter({
    name: "fleetgate_graphql_operations_total",
    help: "GraphQL operations over HTTP that ran, by what answered them: database (the statement wrote the whole answer) or executor (the resolvers)",
    labelNames: ["answered_by"],
    registers,
    collect() {
      this.reset();
      this.inc({ answered_by: "database" }, deps.graphqlAnswers.database);
      this.inc({ answered_by: "executor" }, deps.graphqlAnswers.executor);
    },
  });
  const online = new DevicesOnline(deps.db, deps.model);
  new Gauge({
    name: "fleetgate_devices_online",
    help: "Devices whose is_online is true, over every fleet (counted at most every 30 s)",
    registers,
    async collect() {
      const count = await online.current();
      if (count !== undefined) this.set(count);
    },
  });

  const proxyCalls = new Counter({
    name: "fleetgate_proxy_device_calls_total",
    help: "Devices a proxy command went to, by outcome: ok, device_error, timeout, unreachable, unsupported",
    labelNames: ["outcome"],
    registers,
  });
  for (const outcome of deps.proxyOutcomes) proxyCalls.inc({ outcome }, 0);
  const fanOut = new Histogram({
    name: "fleetgate_proxy_fanout_devices",
    help: "Devices one proxy command went to",
    buckets: [1, 2, 5, 10, 50, 100, 500, 1000, 5000, 10000],
    registers,
  });
  const loginFailures = new Counter({
    name: "fleetgate_login_failures_total",
    help: "Logins refused for a wrong username or password",
    registers,
  });
  const loginThrottled = new Counter({
    name: "fleetgate_login_throttled_total",
    help: "Login attempts refused with 429 before their password was checked",
    registers,
  });

  app.get("/metrics", async (request: FastifyRequest, reply: FastifyReply) => {
    if (deps.token !== undefined && !bearerMatches(request.headers.authorization, deps.token)) {
      reply.header("www-authenticate", 'Bearer realm="metrics"');
      throw new Unauthorized();
    }
    const text = `${requests.text()}\n${await registry.metrics()}${notANumber(await processMetrics().metrics())}`;
    return reply.type(registry.contentType).send(text);
  });

  return {
    proxyCommand(outcomes) {
      fanOut.observe(outcomes.length);
      for (const outcome of outcomes) proxyCalls.inc({ outcome });
    },
    logins: { failed: () => loginFailures.inc(), throttled: () => loginThrottled.inc() },
  };
}

/**
 * The PostgreSQL pool, read when scraped. The embedded database has no pool (one connection, in
 * the process), so these families are absent there rather than a constant 1.
 */
function poolMetrics(db: Database, registers: Registry[]): void {
  const stats = db.poolStats?.bind(db);
  if (!stats) return;
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  gauge("fleetgate_db_pool_max_connections", "The most connections the pool opens", () => stats().max);
  gauge("fleetgate_db_pool_connections", "Connections open, busy or idle", () => stats().total);
  gauge("fleetgate_db_pool_idle_connections", "Connections open and idle", () => stats().idle);
  gauge("fleetgate_db_pool_waiting_requests", "Callers waiting for a connection", () => stats().waiting);
}

/**
 * prom-client 15 writes a NaN sample as `Nan`; the text format spells it `NaN`, and strict parsers
 * refuse the other. The event-loop lag's mean and deviation are NaN whenever no delay was sampled
 * since the last scrape (always on the first, which starts the sampling).
 */
function notANumber(text: string): string {
  return text.replace(/ Nan$/gm, " NaN");
}

/** `Authorization: Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
  if (given === undefined) return false;
  const [a, b] = [Buffer.from(given), Buffer.from(token)];
  return a.length === b.length && timingSafeEqual(a, b);
}

function statementCacheMetrics(caches: MetricsDeps["statementCaches"], registers: Registry[]): void {
  new Counter({
    name: "fleetgate_statement_cache_lookups_total",
    help: "Reads whose shape had a compiled statement (hit) or not (miss: planned and compiled), by cache: odata_url (a hit skips parsing too), query, or graphql_document (an operation's whole plan, by document, caller and variables shape)",
    labelNames: ["cache", "result"],
    registers,
    collect() {
      this.reset();
      for (const [cache, { stats }] of Object.entries(caches)) {
        this.inc({ cache, result: "hit" }, stats.hits);
        this.inc({ cache, result: "miss" }, stats.misses);
      }
    },
  });
  new Gauge({
    name: "fleetgate_statement_cache_entries",
    help: "Shapes a statement cache holds (it keeps the most recently used), by cache",
    labelNames: ["cache"],
    registers,
    collect() {
      for (const [cache, { stats }] of Object.entries(caches)) this.set({ cache }, stats.entries);
    },
  });
}
