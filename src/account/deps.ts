import type { Authenticator } from "../auth/caller.ts";
import type { Throttle } from "../auth/throttle.ts";
import type { Database } from "../db/database.ts";
import type { Model } from "../model/types.ts";

/** What the accounts surface's routes are given by src/server.ts. */
export interface AccountDeps {
  readonly db: Database;
  readonly model: Model;
  readonly authenticator: Authenticator;
  /** Failed logins per (username, network), per address and per username. */
  readonly throttle: Throttle;
}
