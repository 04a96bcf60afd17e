import cors from "@fastify/cors";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import { accountRefusals } from "./account/refusals.ts";
import { accountRoutes } from "./account/routes.ts";
import { Authenticator } from "./auth/caller.ts";
import { KeyBox } from "./auth/key-box.ts";
import { resolveRequestContext } from "./auth/request-context.ts";
import { signingSecret, storedSecret } from "./auth/secrets.ts";
import { SharedLoginThrottle } from "./auth/shared-throttle.ts";
import { throttleOptionsFrom } from "./auth/throttle.ts";
import { ThrottleStore } from "./auth/throttle-store.ts";
import { catalogueRoutes } from "./catalogue/routes.ts";
import type { Config } from "./config.ts";
import { CONSOLE_PREFIX, consoleRoutes } from "./console/routes.ts";
import type { ReadShape } from "./core/read.ts";
import { StatementCache } from "./core/statement-cache.ts";
import { channels, parseId } from "./db/channels.ts";
import type { Database } from "./db/database.ts";
import { deviceRefusals } from "./devices/refusals.ts";
import { deviceRoutes } from "./devices/routes.ts";
import { NotFound } from "./errors.ts";
import { createBus } from "./events/bus.ts";
import { DocumentPlans } from "./graphql/execution/document-plans.ts";
import { graphqlRoutes } from "./graphql/http.ts";
import { useBearerChallenge } from "./http/bearer-challenge.ts";
import { DEFAULT_BODY_LIMIT, useBodyLimits } from "./http/body-limits.ts";
import { useCompression } from "./http/compression.ts";
import { type RefusalAnswer, sendError, surfaceErrors } from "./http/errors.ts";
import { useJsonBodies } from "./http/json-body.ts";
import { useMetrics } from "./http/metrics.ts";
import { useReadiness } from "./http/readiness.ts";
import { useRequestContext } from "./http/request-context.ts";
import { REQUEST_ID_HEADER, requestIdOf, useRequestIds } from "./http/request-id.ts";
import { useRequestLog } from "./http/request-log.ts";
import { trustProxyOption } from "./http/trust-proxy.ts";
import { lazyRequestLogger } from "./logger.ts";
import type { Model } from "./model/types.ts";
import { odataRoutes } from "./odata/http.ts";
import type { UrlShapeRead } from "./odata/read.ts";
import { odataRefusals } from "./odata/refusals.ts";
import { buildVersions } from "./odata/versions/index.ts";
import { startCommandJobs } from "./proxy/jobs/start.ts";
import { defaultNetworks, NetworkGuard } from "./proxy/network-guard.ts";
import { proxyOutcomes } from "./proxy/outcome.ts";
import { proxyRefusals } from "./proxy/refusals.ts";
import { restartRoutes } from "./proxy/restart-routes.ts";
import { proxyRoutes } from "./proxy/routes.ts";

export interface Deps {
  readonly db: Database;
  readonly model: Model;
  readonly config: Config;
  readonly logger: Logger;
}

// The liveness probe answers under the names other stacks' probes use too (Kubernetes' `/livez`,
// the older `/healthz`), so a probe copied from one of them needs no change.
const livenessRoutes = ["/ping", "/livez", "/healthz"];

// Routes for operators and their tools (README "Operations").
const operationsRoutes = new Set([...livenessRoutes, "/readyz", "/metrics"]);

export async function buildServer(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Our own request log (http/request-log.ts) writes one line per request instead.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's child logger is made only if the request writes a line (logger.ts).
    childLoggerFactory: lazyRequestLogger,
    // Bodies are JSON of at most 512 kB, as the reference API accepts; less where a route needs
    // less (http/body-limits.ts).
    bodyLimit: DEFAULT_BODY_LIMIT,
    return503OnClosing: true,
    // balena ignores a trailing slash on its routes (balena-sdk 19 posts to `/api-key/v1/`).
    routerOptions: { ignoreTrailingSlash: true },
    // The caller's x-request-id when it is acceptable, else a new one (http/request-id.ts).
    genReqId: requestIdOf,
    // Above a load balancer's idle time-out (60 s on most), so the balancer closes an idle
    // connection first and never sends a request down one we are closing.
    keepAliveTimeout: deps.config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Behind a load balancer, request.ip (which the login throttle counts) is the client's only
    // when X-Forwarded-For is trusted, and only from the balancer (TRUST_PROXY).
    trustProxy: trustProxyOption(deps.config.TRUST_PROXY),
  });
  app.server.headersTimeout = deps.config.HTTP_HEADERS_TIMEOUT_MS;
  app.setErrorHandler(sendError);
  useJsonBodies(app);
  // An unknown route answers as every other error does, never with an empty body.
  app.setNotFoundHandler((request, reply) => {
    sendError(new NotFound(`No route ${request.method} ${request.url.split("?")[0]}`), request, reply);
  });
  // Browser front-ends call the API from other origins with a bearer token (no cookies), so any
  // origin may, unless CORS_ORIGINS names the allowed ones.
  await app.register(cors, {
    origin: deps.config.CORS_ORIGINS
      ? deps.config.CORS_ORIGINS.split(",").map((origin) => origin.trim())
      : true,
    allowedHeaders: [
      "Authorization",
      "Content-Type",
      "X-Balena-Client",
      "OData-Version",
      "OData-MaxVersion",
      "x-dry-run",
      "Prefer",
      "Idempotency-Key",
      REQUEST_ID_HEADER,
    ],
    exposedHeaders: [
      "Retry-After",
      "Location",
      "Preference-Applied",
      "OData-Version",
      "OData-EntityId",
      "x-sql-statements",
      "x-affected-rows",
      "WWW-Authenticate",
      REQUEST_ID_HEADER,
    ],
    methods: ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"],
  });
  // Before any route: the request id, 401 challenge, log, compression, metrics, body limits and
  // cancellation wrap every handler registered after them.
  useRequestIds(app);
  useBearerChallenge(app);
  useRequestLog(app, deps.logger);
  // After the request log, whose onSend must see the answer before it is compressed into a stream.
  await useCompression(app, {
    enabled: deps.config.HTTP_COMPRESSION,
    minBytes: deps.config.HTTP_COMPRESSION_MIN_BYTES,
  });
  useBodyLimits(app);
  const authenticator = new Authenticator(deps.db, await signingSecret(deps.db, deps.config.JWT_SECRET));
  useRequestContext(app, {
    authenticator,
    // The probes and /metrics answer while the database is away; the console's files are the same
    // for everyone.
    takesNoCaller: (route) => operationsRoutes.has(route) || route.startsWith(CONSOLE_PREFIX),
  });
  // The statement caches, shared by the OData and GraphQL surfaces (core/statement-cache.ts).
  const statementCaches = {
    urls: new StatementCache<UrlShapeRead>(),
    queries: new StatementCache<ReadShape>(),
  };
  const graphqlAnswers = { database: 0, executor: 0 };
  const documentPlans = new DocumentPlans();
  const metrics = useMetrics(app, {
    statementCaches: {
      odata_url: statementCaches.urls,
      query: statementCaches.queries,
      graphql_document: documentPlans,
    },
    graphqlAnswers,
    db: deps.db,
    model: deps.model,
    token: deps.config.METRICS_TOKEN,
    proxyOutcomes,
  });

  // The probes (README "Operations"): liveness, and readiness (the database answers, not stopping).
  for (const url of livenessRoutes)
    app.get(url, async (_request, reply) => reply.type("text/plain").send("OK"));
  useReadiness(app, deps.db);

  // A write of this instance to a table credentials or rights are made of: cached callers are
  // forgotten, and with replicas, reads wait until they have replayed it (db/replicas.ts), from
  // this request on, not from when its announcement arrives.
  const identitiesChanged = () => {
    authenticator.forget();
    deps.db.rightsChanged?.();
  };
  // The login throttle counts in the database every instance shares; while it cannot, in memory.
  const throttleOptions = throttleOptionsFrom(deps.config);
  const throttle = new SharedLoginThrottle(
    new ThrottleStore(
      deps.db,
      await storedSecret(deps.db, "login_throttle_secret", undefined),
      throttleOptions,
    ),
    throttleOptions,
    { ...metrics.logins, storeFailed: warnEvery(10_000, deps.logger) },
  );
  app.addHook("onClose", async () => throttle.close());
  // Each surface below reads its request's context (auth/request-context.ts) and answers refusals
  // its own way (surface(), with its refusals.ts; GraphQL in graphql/errors.ts).
  await surface(app, accountRefusals, (scope) =>
    accountRoutes(scope, { db: deps.db, model: deps.model, authenticator, throttle }),
  );
  await surface(app, odataRefusals, (scope) =>
    odataRoutes(scope, {
      db: deps.db,
      model: deps.model,
      versions: buildVersions(deps.model),
      identitiesChanged,
      limits: {
        maxCost: deps.config.ODATA_MAX_COST,
        unboundedRows: deps.config.ODATA_UNBOUNDED_ROWS,
        maxExpandDepth: deps.config.ODATA_MAX_EXPAND_DEPTH,
      },
      statementCaches,
      batch: {
        maxParts: deps.config.ODATA_BATCH_MAX_PARTS,
        maxBytes: deps.config.ODATA_BATCH_MAX_BYTES,
        maxCost: deps.config.ODATA_BATCH_MAX_COST,
      },
    }),
  );
  const keys = new KeyBox(
    await storedSecret(deps.db, "supervisor_key_secret", deps.config.SUPERVISOR_KEY_SECRET),
  );
  const guard = new NetworkGuard(
    deps.config.PROXY_ALLOWED_NETWORKS?.split(",").map((network) => network.trim()) ?? defaultNetworks,
  );
  const timeoutMs = deps.config.PROXY_TIMEOUT_MS;
  // Commands as jobs: the queue and this instance's worker, stopped with the server (a running
  // batch gets a few seconds; another instance, or this one restarted, takes over the rest).
  const commandJobs = deps.config.COMMAND_JOBS
    ? startCommandJobs({ ...deps, keys, guard, timeoutMs, observe: metrics.proxyCommand })
    : undefined;
  app.addHook("onClose", async () => {
    await commandJobs?.stop(Math.min(deps.config.SHUTDOWN_GRACE, 10) * 1000);
  });
  const proxy = {
    db: deps.db,
    model: deps.model,
    keys,
    guard,
    timeoutMs,
    concurrency: deps.config.PROXY_CONCURRENCY,
    observe: metrics.proxyCommand,
    ...(commandJobs ? { jobs: commandJobs.jobs } : {}),
  };
  await surface(app, proxyRefusals, (scope) => {
    proxyRoutes(scope, proxy);
    restartRoutes(scope, proxy);
  });
  // The change bus of GraphQL subscriptions and of the credential cache. Closed before the server
  // waits for its requests to end, so open subscriptions complete and let it.
  const events = createBus(deps.db, deps.logger);
  app.addHook("preClose", () => events.close());
  // A credential ended or its caller changed by any writer (another instance, the shell, a
  // cascade): this instance forgets the cached caller when it hears so, not seconds later when the
  // cache would let it go; when its connection is lost, and again after the reconnection (when
  // announcements may have been lost), it forgets all.
  events.subscribe(
    channels.credential,
    (payload) => {
      const actor = parseId(payload);
      if (actor !== undefined) authenticator.forgetActor(actor);
    },
    undefined,
    () => authenticator.forget(),
    () => authenticator.forget(),
  );
  graphqlRoutes(app, {
    db: deps.db,
    model: deps.model,
    proxy,
    identitiesChanged,
    events,
    config: deps.config,
    logger: deps.logger,
    resolveContext: (request) => resolveRequestContext(request, authenticator),
    resolveCredential: (credential) => authenticator.resolve(credential),
    statementCache: statementCaches.queries,
    answers: graphqlAnswers,
    documentPlans,
  });
  await surface(app, deviceRefusals, (scope) =>
    deviceRoutes(scope, {
      db: deps.db,
      model: deps.model,
      keys,
      offlineAfterSeconds: deps.config.DEVICE_OFFLINE_TIMEOUT,
      reportWindowMs: deps.config.DEVICE_REPORT_WINDOW_MS,
      events,
    }),
  );
  // The catalogue refuses nothing: the server's error handler answers its errors.
  catalogueRoutes(app, { db: deps.db, model: deps.model, config: deps.config });

  // The browser console: static files, a client of /graphql like any other (issue 48).
  consoleRoutes(app);

  await app.ready();
  return app;
}

/**
 * A surface's routes in a fastify scope of their own, whose errors the HTTP renderer answers with
 * the surface's answer to a refusal (its refusals.ts): each surface maps a refusal once, there.
 */
async function surface(
  app: FastifyInstance,
  refusals: RefusalAnswer,
  routes: (scope: FastifyInstance) => void,
): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler(surfaceErrors(refusals));
    routes(scope);
  });
}

/** Says the login throttle's store failed, at most once per `intervalMs`: an outage fails every login. */
function warnEvery(intervalMs: number, logger: Logger): (error: unknown) => void {
  let saidAt = Number.NEGATIVE_INFINITY;
  return (error) => {
    if (Date.now() - saidAt < intervalMs) return;
    saidAt = Date.now();
    logger.warn({ err: error }, "login throttle: the database failed; this instance counts logins alone");
  };
}
