import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { credentialTables } from "../auth/caller.ts";
import { asReader, asWriter, requestContext } from "../auth/request-context.ts";
import type { ReadLimits } from "../core/limits.ts";
import type { Database } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { batchRoute } from "./batch/route.ts";
import { formatInUrl, STANDARD_ROOT, wantsV4 } from "./negotiation.ts";
import { type ReadContext, read } from "./read.ts";
import { metadataDocument, serviceDocument } from "./v4/metadata.ts";
import { V4_HEADERS } from "./v4/serialize.ts";
import type { Versions } from "./versions/index.ts";
import { DRY_RUN_HEADER, write } from "./write.ts";

export interface ODataDeps {
  readonly db: Database;
  readonly model: Model;
  readonly versions: Versions;
  /** A write changed users or keys: cached credentials must be looked up again. */
  readonly identitiesChanged: () => void;
  /** The cost and depth limits of a read. */
  readonly limits: ReadLimits;
  /** Compiled reads by URL and by query shape (read.ts). */
  readonly statementCaches?: ReadContext["statementCaches"];
  /** The bounds of one $batch (./batch/). */
  readonly batch?: { readonly maxParts: number; readonly maxBytes: number; readonly maxCost: number };
}

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

/** `/v1/…` to `/v6/…`: reads the request, calls the read or write core, sends. */
export function odataRoutes(app: FastifyInstance, deps: ODataDeps): void {
  for (const version of deps.versions.names) {
    const batch = version === STANDARD_ROOT && deps.batch !== undefined;
    const metadata = metadataDocument(deps.versions.view(version).model, {
      maxExpandDepth: deps.limits.maxExpandDepth,
      batch,
    });
    if (batch && deps.batch) batchRoute(app, `/${version}/$batch`, { ...deps, batch: deps.batch });
    const rest = (request: FastifyRequest) => request.url.slice(version.length + 1);

    app.get(`/${version}/$metadata`, async (request, reply) => {
      asReader(requestContext(request));
      return reply.type("application/xml").headers(V4_HEADERS).send(metadata);
    });

    // The service document at the version's root (OData v4 JSON Format, section 5): where a generic
    // client, or a person following the banner's link, starts.
    const service = serviceDocument(version, deps.versions.view(version).model);
    const serviceRoute = async (request: FastifyRequest, reply: FastifyReply) => {
      asReader(requestContext(request));
      return reply.type("application/json").headers(V4_HEADERS).send(service);
    };
    // `/v6/` too: the router ignores a trailing slash.
    app.get(`/${version}`, serviceRoute);

    app.get(`/${version}/*`, async (request, reply) => {
      const { permissions } = asReader(requestContext(request));
      const result = await read(
        {
          version,
          url: rest(request),
          headers: request.headers,
          origin: `${request.protocol}://${request.host}`,
        },
        {
          db: deps.db,
          model: deps.model,
          versions: deps.versions,
          permissions,
          limits: deps.limits,
          statementCaches: deps.statementCaches,
        },
      );
      // A null value at the end of a path, or an entity the client holds (304): no content, so no
      // content type either.
      if (result.status === 204 || result.status === 304)
        return reply.code(result.status).headers(result.headers).send();
      return reply.type(result.contentType).headers(result.headers).send(result.body);
    });

    const writeRoute = async (request: FastifyRequest, reply: FastifyReply) => {
      // Writing needs a credential, whatever the caller's predicate would allow.
      const { caller, permissions } = asWriter(requestContext(request));
      const v4 = wantsV4(version, request.headers, formatInUrl(request.url));
      const result = await write(
        {
          method: request.method,
          version,
          url: rest(request),
          body: request.body,
          dryRun: request.headers[DRY_RUN_HEADER] === "true",
          v4,
          prefer: headerText(request.headers.prefer),
          ifMatch: headerText(request.headers["if-match"]),
          ifNoneMatch: headerText(request.headers["if-none-match"]),
        },
        { db: deps.db, model: deps.model, versions: deps.versions, permissions, actor: caller.actor },
      );
      if (credentialTables.has(result.table)) deps.identitiesChanged();
      return reply.code(result.status).headers(result.headers).send(result.body);
    };
    app.post(`/${version}/*`, writeRoute);
    app.patch(`/${version}/*`, writeRoute);
    app.put(`/${version}/*`, writeRoute);
    app.delete(`/${version}/*`, writeRoute);
  }
}
