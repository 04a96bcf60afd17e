import type { Caller } from "../auth/caller.ts";
import type { Permissions } from "../auth/permissions.ts";
import { permissionsFor } from "../auth/policies.ts";
import type { Database } from "../db/database.ts";
import { Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import type { ProxyContext } from "../proxy/core.ts";
import type { RowLoaders } from "./loaders.ts";
import type { RequestCost, SelectionPlanner } from "./selection.ts";
import type { GraphQLModel } from "./types.ts";

/** What every resolver can reach: the caller of this request and the cores it calls. */
export interface GraphQLContext {
  readonly caller: Caller | undefined;
  readonly core: GraphQLCore;
  readonly loaders: RowLoaders;
  readonly cost: RequestCost;
}

export interface GraphQLCore {
  readonly db: Database;
  readonly model: Model;
  readonly graph: GraphQLModel;
  readonly selection: SelectionPlanner;
  /** The proxy's fixed dependencies; the caller's permissions are added per request. */
  readonly proxy: Omit<ProxyContext, "permissions" | "actor">;
  /** A write changed users or keys: cached credentials must be looked up again. */
  readonly identitiesChanged: () => void;
}

/** The caller's permissions and actor; every field but introspection needs a credential. */
export function access(context: GraphQLContext): { caller: Caller; permissions: Permissions; actor: number } {
  const caller = context.caller;
  if (!caller) throw new Unauthorized();
  return { caller, permissions: permissionsFor(caller), actor: caller.actor };
}
