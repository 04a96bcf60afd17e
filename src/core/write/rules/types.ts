import type { Permissions } from "../../../auth/permissions.ts";
import type { Executor } from "../../../db/database.ts";
import type { Model, Resource } from "../../../model/types.ts";
import type { Values } from "../values.ts";

export interface RuleContext {
  readonly tx: Executor;
  readonly resource: Resource;
  readonly model: Model;
  readonly permissions: Permissions;
  /** The caller's actor id, recorded by rules that keep a trail (billing events). */
  readonly actor: number | undefined;
}

/**
 * A resource's business rules. Each step is set-based, so a bulk write costs the same few
 * statements as a single one and a rule that fails rolls the whole write back.
 */
export interface ResourceRules {
  /** The creator comes to own a new row (an organization): the caller's write predicate holds only after `afterCreate`. */
  readonly ownedByCreator?: boolean;
  /**
   * Links the rules look up themselves, with checks of their own (a membership's member, whom the
   * organization's administrator adds without seeing them first); the write core leaves them alone.
   */
  readonly resolvesLinks?: readonly string[];
  /** Other forms a field accepts, adapted before validation (`"true"` for true). */
  readonly coercions?: Readonly<Record<string, (value: unknown) => unknown>>;
  /** The columns to insert: virtual fields resolved, server-assigned values filled in. */
  prepareCreate?(values: Values, context: RuleContext): Promise<Values>;
  /** The columns to set on every target row; runs before the UPDATE and may refuse it. */
  prepareUpdate?(values: Values, ids: readonly number[], context: RuleContext): Promise<Values>;
  /** Follow-ups to a POST only (a new user's personal organization), before `afterWrite`. */
  afterCreate?(values: Values, id: number, context: RuleContext): Promise<void>;
  /** What goes with the rows of a DELETE that the schema does not cascade to, just before they go. */
  beforeDelete?(ids: readonly number[], context: RuleContext): Promise<void>;
  /** Follow-ups and checks on the rows after they changed (created or updated), in the same transaction. */
  afterWrite?(values: Values, ids: readonly number[], context: RuleContext): Promise<void>;
}
