import type { Permissions, RowsHint } from "../auth/permissions.ts";
import { ident } from "../db/sql.ts";
import type { Model, Navigation, Resource } from "../model/types.ts";
import type { Join, Planned, TableRef } from "./plan-types.ts";
import type { VersionField, VersionFields } from "./query.ts";

/** Hands out table aliases; each table gets its permission predicate the moment it is added. */
export class Tables {
  private next = 0;

  constructor(
    readonly model: Model,
    private readonly permissions: Permissions,
    private readonly versionFields: VersionFields = new Map(),
  ) {}

  /** `rows`: what is known of the rows it will read (a key lookup reads one). */
  add(resource: Resource, rows?: RowsHint): TableRef {
    const alias = `t${this.next++}`;
    const row = ident(alias);
    const ownRows = this.permissions.ownRows?.(resource, row);
    return {
      resource,
      alias,
      permission: this.permissions.readable(resource, row, rows),
      ...(ownRows ? { ownRows } : {}),
    };
  }

  /** `local`: the parent's side when it is computed (a version field's link), not the navigation's column. */
  join(parent: TableRef, navigation: Navigation, local?: Planned): Join {
    const target = this.model.resources.get(navigation.target);
    if (!target)
      throw new Error(`model: navigation ${navigation.name} points to unknown ${navigation.target}`);
    const child = this.add(target);
    const through = navigation.through && this.model.resources.get(navigation.through.resource);
    if (navigation.through && !through)
      throw new Error(
        `model: navigation ${navigation.name} goes through unknown ${navigation.through.resource}`,
      );
    return {
      parent,
      navigation,
      child,
      ...(local ? { local } : {}),
      ...(through ? { through: this.add(through) } : {}),
    };
  }

  /** A field the query's version declares beyond the model (`@name`), if `name` is one. */
  versionField(resource: Resource, name: string): VersionField | undefined {
    return this.versionFields.get(resource.name)?.get(name);
  }
}
