import type { Permissions } from "../auth/permissions.ts";
import { ident } from "../db/sql.ts";
import type { Model, Navigation, Resource } from "../model/types.ts";
import type { Join, TableRef } from "./plan-types.ts";

/** Hands out table aliases; each table gets its permission predicate the moment it is added. */
export class Tables {
  private next = 0;

  constructor(
    readonly model: Model,
    private readonly permissions: Permissions,
  ) {}

  add(resource: Resource): TableRef {
    const alias = `t${this.next++}`;
    return { resource, alias, permission: this.permissions.readable(resource, ident(alias)) };
  }

  join(parent: TableRef, navigation: Navigation): Join {
    const target = this.model.resources.get(navigation.target);
    if (!target)
      throw new Error(`model: navigation ${navigation.name} points to unknown ${navigation.target}`);
    return { parent, navigation, child: this.add(target) };
  }
}
