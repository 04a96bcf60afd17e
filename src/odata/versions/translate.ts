import type {
  ExpandItem,
  Expr,
  Key,
  ODataQuery,
  OrderItem,
  PathExpr,
  QueryOptions,
  SelectItem,
} from "../../core/query.ts";
import { LinkReference, mapPaths } from "../../core/query.ts";
import { BadRequest, NotFound } from "../../errors.ts";
import type { Resource } from "../../model/types.ts";
import type { ResourceMapping, VersionView } from "./view.ts";

/** A resource of the version being translated: its names there, and how they read in v6. */
interface Place {
  readonly resource: Resource;
  readonly mapping: ResourceMapping;
}

interface Scope {
  readonly place: Place;
  readonly variables: ReadonlyMap<string, Place>;
}

// Translates a request of another version into the v6 request that means the same, naming every
// output after that version, so the one SQL statement answers in that version's names.
export class VersionTranslator {
  constructor(private readonly view: VersionView) {}

  place(name: string): Place {
    const resource = this.view.model.resources.get(name);
    const mapping = this.view.mappings.get(name);
    if (!resource || !mapping) throw new NotFound(`Unknown resource '${name}'`);
    return { resource, mapping };
  }

  /** The v6 path of a field or navigation of `place`; a name this version lacks is a 400. */
  private v6Path(place: Place, name: string, what = "field"): readonly string[] {
    const path = place.mapping.paths.get(name);
    if (!path) throw new BadRequest(`Unknown ${what} '${name}' of ${place.resource.name}`);
    return path;
  }

  private target(place: Place, navigation: string): Place {
    const found = place.resource.navigations.get(navigation);
    if (found) return this.place(found.target);
    throw new BadRequest(`Unknown navigation '${navigation}' of ${place.resource.name}`);
  }

  query(query: ODataQuery): ODataQuery {
    const place = this.place(query.resource);
    return {
      ...query,
      resource: place.mapping.v6,
      ...(query.key ? { key: this.key(place, query.key) } : {}),
      options: this.options(place, query.options),
      ...this.versionFields(),
    };
  }

  /** The fields v6 computes for this version, which translated queries may name. */
  private versionFields(): Pick<ODataQuery, "versionFields"> {
    return this.view.versionFields.size > 0 ? { versionFields: this.view.versionFields } : {};
  }

  /** The resource, key and $filter of a PATCH, PUT or DELETE (which take no other options). */
  writeTarget(query: ODataQuery): ODataQuery {
    const place = this.place(query.resource);
    const { filter } = query.options;
    return {
      ...query,
      resource: place.mapping.v6,
      ...(query.key ? { key: this.key(place, query.key) } : {}),
      options: filter
        ? { ...query.options, filter: this.expr(filter, { place, variables: new Map() }) }
        : query.options,
      ...this.versionFields(),
    };
  }

  key(place: Place, key: Key): Key {
    if (key.kind === "id") return key;
    return {
      kind: "fields",
      values: key.values.map(([name, value]) => {
        const [v6, ...through] = this.v6Path(place, name);
        if (v6 === undefined || through.length > 0)
          throw new BadRequest(`'${name}' is not a key of ${place.resource.name}`);
        return [v6, value] as const;
      }),
    };
  }

  options(place: Place, options: QueryOptions): QueryOptions {
    const scope: Scope = { place, variables: new Map() };
    const names =
      options.select ??
      [...place.resource.fields.values()]
        .filter((field) => field.selectedByDefault)
        .map((field) => field.name);
    const select: SelectItem[] = names.map((item) => {
      // A constant, an ETag or an entity's id between texts reads no field by name.
      if (typeof item !== "string" && !("path" in item)) return item;
      const name = typeof item === "string" ? item : item.as;
      if (!place.resource.fields.has(name) && place.resource.navigations.has(name)) {
        throw new BadRequest(`'${name}' of ${place.resource.name} is a collection; use $expand=${name}`);
      }
      return { path: this.v6Path(place, name), as: name };
    });
    return {
      ...options,
      select,
      ...(options.expand ? { expand: options.expand.map((item) => this.expand(place, item)) } : {}),
      ...(options.filter ? { filter: this.expr(options.filter, scope) } : {}),
      ...(options.orderby ? { orderby: options.orderby.map((item) => this.order(item, scope)) } : {}),
    };
  }

  private expand(place: Place, item: ExpandItem): ExpandItem {
    const [v6] = this.v6Path(place, item.name, "navigation");
    const target = this.target(place, item.name);
    const options = item.count ? this.countOptions(target, item.options) : this.options(target, item.options);
    return { ...item, name: v6 as string, as: item.as ?? item.name, options };
  }

  private countOptions(place: Place, options: QueryOptions): QueryOptions {
    const scope: Scope = { place, variables: new Map() };
    return { ...options, ...(options.filter ? { filter: this.expr(options.filter, scope) } : {}) };
  }

  private order(item: OrderItem, scope: Scope): OrderItem {
    return { ...item, path: this.path(item.path, scope) };
  }

  /** A v6 entity (a dry run's before/after) in this version's names; v6-only fields are left out. */
  entity(place: Place, entity: Record<string, unknown> | null): Record<string, unknown> | null {
    if (!entity) return entity;
    const renamed: Record<string, unknown> = {};
    for (const [name, path] of place.mapping.paths) {
      const [v6, ...through] = path;
      if (v6 !== undefined && through.length === 0 && v6 in entity) renamed[name] = entity[v6];
    }
    return renamed;
  }

  /**
   * A write body in v6 names. A derived field (v5 `device_type: "<slug>"`) becomes its link, given
   * by the key it names: the write core looks the row up inside its transaction. A nested entity
   * of a deep insert (`linked`) gets its link to the new entity from the write core, which checks
   * what a create requires once it is set.
   */
  body(place: Place, body: unknown, mode: "create" | "update", linked = false): unknown {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
    if (mode === "create" && !linked) {
      for (const name of place.resource.writability.required) {
        if (!(name in body)) throw new BadRequest(`'${name}' is required to create a ${place.resource.name}`);
      }
    }
    const translated: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(body)) {
      const path = place.mapping.paths.get(name);
      // Hidden fields (a password) have the same name in every version.
      if (!path && place.resource.hiddenFields.has(name)) {
        translated[name] = value;
        continue;
      }
      if (!path) throw new BadRequest(`Unknown field '${name}' of ${place.resource.name}`);
      if (!place.resource.writability[mode].includes(name)) {
        throw new BadRequest(`'${name}' of ${place.resource.name} is not writable`);
      }
      const reference = place.mapping.references.get(name);
      const [renamed] = path;
      if (reference) {
        translated[reference.link] =
          value === null ? null : new LinkReference(reference.resource, reference.key, value, name);
      } else if (renamed !== undefined) {
        translated[renamed] = value;
      }
    }
    return translated;
  }

  path(path: PathExpr, scope: Scope): PathExpr {
    const [head, ...rest] = path.segments;
    const variable = head === undefined ? undefined : scope.variables.get(head);
    let place = variable ?? scope.place;
    const segments: string[] = variable ? [head as string] : [];
    const names = variable ? rest : path.segments;
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      if (last && !path.end) {
        segments.push(...this.v6Path(place, name));
        return;
      }
      segments.push(...this.v6Path(place, name, "navigation"));
      place = this.target(place, name);
    });
    if (!path.end) return { kind: "path", segments };
    if (path.end.kind === "count") {
      const filter = path.end.filter
        ? this.expr(path.end.filter, { place, variables: scope.variables })
        : undefined;
      return { kind: "path", segments, end: { kind: "count", ...(filter ? { filter } : {}) } };
    }
    const variables = new Map(scope.variables).set(path.end.variable, place);
    const body = this.expr(path.end.body, { place: scope.place, variables });
    return { kind: "path", segments, end: { ...path.end, body } };
  }

  expr(expr: Expr, scope: Scope): Expr {
    return mapPaths(expr, (path) => this.path(path, scope));
  }
}
