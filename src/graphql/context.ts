import type { FastifyReply, FastifyRequest } from "fastify";
import type { Authenticated, Caller } from "../auth/caller.ts";
import type { Permissions } from "../auth/permissions.ts";
import { permissionsFor } from "../auth/policies.ts";
import type { CombinedStatements } from "../core/combined-reads.ts";
import type { QueryStatementCache } from "../core/read.ts";
import type { Database } from "../db/database.ts";
import { Unauthorized } from "../errors.ts";
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
  /** `anonymous` without a credential; undefined when the credential given is invalid. */
  readonly caller: Caller | undefined;
  /** The credential the request presented, which a subscription follows (live-caller.ts). */
  readonly credential: string | undefined;
  readonly core: GraphQLCore;
  readonly loaders: RowLoaders;
  /** The reads of the root query fields, run together (root-reads.ts). */
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

/** The caller and their permissions: an invalid credential is refused; no credential reads what is public. */
export function access(context: GraphQLContext): { caller: Caller; permissions: Permissions } {
  const caller = context.caller;
  if (!caller) throw new Unauthorized();
  return { caller, permissions: permissionsFor(caller) };
}

/** The caller who may write or command devices: one with a valid credential. */
export function writer(context: GraphQLContext): { caller: Authenticated; permissions: Permissions } {
  const { caller, permissions } = access(context);
  if (caller.kind === "anonymous") throw new Unauthorized();
  return { caller, permissions };
}
