import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Permissions } from "../auth/permissions.ts";
import type { Database } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { metadataDocument } from "./metadata.ts";
import { read } from "./read.ts";
import { DRY_RUN_HEADER, write } from "./write/request.ts";

export interface ODataDeps {
  readonly db: Database;
  readonly model: Model;
  readonly permissionsOf: (request: FastifyRequest) => Permissions;
}

const version = "v6";

/** `/v6/…`: reads the request, calls the read or write core, sends. */
export function odataRoutes(app: FastifyInstance, deps: ODataDeps): void {
  const metadata = metadataDocument(deps.model);
  app.get(`/${version}/$metadata`, async (_request, reply) => reply.type("application/xml").send(metadata));

  app.get(`/${version}/*`, async (request, reply) => {
    const result = await read(
      { version, url: request.url.slice(version.length + 1), headers: request.headers },
      { db: deps.db, model: deps.model, permissions: deps.permissionsOf(request) },
    );
    return reply.type(result.contentType).send(result.body);
  });

  const writeRoute = async (request: FastifyRequest, reply: FastifyReply) => {
    const result = await write(
      {
        method: request.method,
        version,
        url: request.url.slice(version.length + 1),
        body: request.body,
        dryRun: request.headers[DRY_RUN_HEADER] === "true",
      },
      { db: deps.db, model: deps.model, permissions: deps.permissionsOf(request), actor: undefined },
    );
    return reply.code(result.status).headers(result.headers).send(result.body);
  };
  app.post(`/${version}/*`, writeRoute);
  app.patch(`/${version}/*`, writeRoute);
  app.put(`/${version}/*`, writeRoute);
  app.delete(`/${version}/*`, writeRoute);
}
