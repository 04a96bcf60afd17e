import type { FastifyRequest } from "fastify";
import { credentialOf } from "../../auth/caller.ts";
import { requestContext } from "../../auth/request-context.ts";
import type { GraphQLContext, GraphQLCore } from "../context.ts";
import { batchOptions, readRows } from "../schema/read.ts";
import { RowLoaders } from "./loaders.ts";
import { RootReads } from "./root-reads.ts";

/**
 * The context of each request's operations (yoga's `context`): the request's caller and
 * credential, the server's cores, and what batches its reads: its root reads (root-reads.ts) and
 * its lookups by id (loaders.ts), each under the request's caller.
 */
export function resolverContext(core: GraphQLCore): (request: FastifyRequest) => Promise<GraphQLContext> {
  return async (req) => {
    const context: GraphQLContext = {
      caller: requestContext(req).caller,
      credential: credentialOf(req.headers, req.query),
      core,
      loaders: new RowLoaders({
        read: (query) => readRows(context, query),
        options: (resource, info, rows) => batchOptions(context, resource, info, rows),
      }),
      reads: new RootReads(core.db, core.combined),
      cost: { rows: 0 },
    };
    return context;
  };
}
