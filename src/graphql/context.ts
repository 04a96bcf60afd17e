import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../auth/caller.ts";
import type { CombinedStatements } from "../core/combined-reads.ts";
import type { QueryStatementCache } from "../core/read.ts";
import type { Database } from "../db/database.ts";
import type { EventBus } from "../events/bus.ts";
import type { Model } from "../model/types.ts";
import type { CommandDeps } from "../proxy/types.ts";
import type { CredentialWatch } from "./execution/credential-watch.ts";
import type { RowLoaders } from "./execution/loaders.ts";
import type { RootReads } from "./execution/root-reads.ts";
import type { GraphQLModel } from "./schema/graphql-model.ts";
import type { RequestCost, SelectionPlanner } from "./schema/selection.ts";

// Yoga's own context has `request` (a Fetch Request); the server's request is `req`.
export interface ServerContext {
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
}

/** What every resolver can reach: the caller of this request and the cores it calls. */
export interface GraphQLContext {
  /**
   * The request context's caller (auth/request-context.ts: read it through `asReader` or `asWriter`);
   * a subscription's is replaced as its credential resolves anew (schema/live-caller.ts).
   */
  readonly caller: Caller | undefined;
  /** The credential the request presented, which a subscription follows (schema/live-caller.ts). */
  readonly credential: string | undefined;
  readonly core: GraphQLCore;
  readonly loaders: RowLoaders;
  /** The reads of the root query fields, run together (execution/root-reads.ts). */
  readonly reads: RootReads;
  readonly cost: RequestCost;
}

export interface GraphQLCore {
  readonly db: Database;
  readonly model: Model;
  readonly graph: GraphQLModel;
  readonly selection: SelectionPlanner;
  /** The proxy's fixed dependencies; the caller's permissions are added per request. */
  readonly proxy: CommandDeps;
  /** A write changed users or keys: cached credentials must be looked up again. */
  readonly identitiesChanged: () => void;
  /** The change bus the subscriptions listen to. */
  readonly events: EventBus;
  /** The credentials of open subscriptions, resolved again as they change. */
  readonly credentials: CredentialWatch;
  /** Compiled reads by query shape, shared with the OData surface. */
  readonly statementCache?: QueryStatementCache;
  /** The statements of combined root reads; absent with GRAPHQL_ONE_STATEMENT=false. */
  readonly combined?: CombinedStatements;
}
