import {
  type ExpandItem,
  type Expr,
  mapPaths,
  type ODataQuery,
  type PathExpr,
  type QueryOptions,
  type SelectItem,
} from "../../core/query.ts";
import { BadRequest } from "../../errors.ts";
import type { Model, Resource } from "../../model/types.ts";

// OData v4 keeps a foreign key and its navigation apart: typed clients read a navigation's name as
// the related entity, and the id as a structural property that the navigation's
// ReferentialConstraint names (CSDL v4.0 §7.1.4). pinejs puts the id under the navigation's name,
// so in v4 JSON and in $metadata the id is the property `<navigation>__id`.

const SUFFIX = "__id";

/** The structural property that holds the id of the navigable link `link`. */
export const fkProperty = (link: string) => `${link}${SUFFIX}`;

/** A link field that is also a navigation: pinejs's `belongs_to__application`, not an API key's actor. */
export function isNavigableLink(resource: Resource, name: string): boolean {
  return resource.fields.get(name)?.link !== undefined && resource.navigations.has(name);
}

/** The link whose fk property `name` is, if it is one. */
export function linkOfFk(resource: Resource, name: string): string | undefined {
  if (!name.endsWith(SUFFIX) || resource.fields.has(name)) return undefined;
  const link = name.slice(0, -SUFFIX.length);
  return isNavigableLink(resource, link) ? link : undefined;
}

/**
 * A v4 request in the names of its version, with each fk property (`X__id`) named as its link (`X`),
 * which is what the translator and the planner know: in $select, $filter, $orderby, at any depth.
 */
export function fkPropertiesAsLinks(query: ODataQuery, model: Model): ODataQuery {
  const resource = model.resources.get(query.resource);
  if (!resource) return query;
  return { ...query, options: new AskedNames(model).options(resource, query.options) };
}

interface Scope {
  readonly resource: Resource;
  readonly variables: ReadonlyMap<string, Resource>;
}

class AskedNames {
  constructor(private readonly model: Model) {}

  private target(resource: Resource, navigation: string): Resource | undefined {
    const found = resource.navigations.get(navigation);
    return found && this.model.resources.get(found.target);
  }

  options(resource: Resource, options: QueryOptions): QueryOptions {
    const scope: Scope = { resource, variables: new Map() };
    return {
      ...options,
      ...(options.select
        ? {
            select: options.select.map((item) =>
              typeof item === "string" ? (linkOfFk(resource, item) ?? item) : item,
            ),
          }
        : {}),
      ...(options.filter ? { filter: this.expr(options.filter, scope) } : {}),
      ...(options.orderby
        ? { orderby: options.orderby.map((item) => ({ ...item, path: this.path(item.path, scope) })) }
        : {}),
      ...(options.expand ? { expand: options.expand.map((item) => this.expand(resource, item)) } : {}),
    };
  }

  private expand(resource: Resource, item: ExpandItem): ExpandItem {
    const target = this.target(resource, item.name);
    if (!target) return item;
    if (!item.count) return { ...item, options: this.options(target, item.options) };
    const { filter } = item.options;
    const scope: Scope = { resource: target, variables: new Map() };
    return filter ? { ...item, options: { ...item.options, filter: this.expr(filter, scope) } } : item;
  }

  private path(path: PathExpr, scope: Scope): PathExpr {
    const [head, ...rest] = path.segments;
    const variable = head === undefined ? undefined : scope.variables.get(head);
    let at: Resource | undefined = variable ?? scope.resource;
    const names = variable ? rest : path.segments;
    const segments = variable ? [head as string] : [];
    names.forEach((name, i) => {
      const last = i === names.length - 1 && !path.end;
      segments.push(last && at ? (linkOfFk(at, name) ?? name) : name);
      if (!last) at = at && this.target(at, name);
    });
    if (!path.end || !at) return { ...path, segments };
    if (path.end.kind === "count") {
      const filter = path.end.filter && this.expr(path.end.filter, { ...scope, resource: at });
      return { kind: "path", segments, end: { kind: "count", ...(filter ? { filter } : {}) } };
    }
    const variables = new Map(scope.variables).set(path.end.variable, at);
    return {
      kind: "path",
      segments,
      end: { ...path.end, body: this.expr(path.end.body, { ...scope, variables }) },
    };
  }

  private expr(expr: Expr, scope: Scope): Expr {
    return mapPaths(expr, (path) => this.path(path, scope));
  }
}

/**
 * A translated (v6) v4 read whose links are output as their fk properties: `X` is read under
 * `X__id`, so that an expansion of `X` sits beside its id rather than in its place.
 */
export function linksAsFkProperties(query: ODataQuery, model: Model): ODataQuery {
  const resource = model.resources.get(query.resource);
  if (!resource) return query;
  return { ...query, options: outputOptions(resource, query.options, model, query) };
}

function outputOptions(
  resource: Resource,
  options: QueryOptions,
  model: Model,
  query: ODataQuery,
): QueryOptions {
  const versionLinks = query.versionFields?.get(resource.name);
  const navigable = (name: string) => {
    const versionField = versionLinks?.get(name);
    if (versionField) return versionField.kind === "link" && versionField.target !== undefined;
    return isNavigableLink(resource, name);
  };
  const items =
    options.select ??
    [...resource.fields.values()].filter((field) => field.selectedByDefault).map((field) => field.name);
  const keys = new Set<string>();
  const select: SelectItem[] = [];
  for (const item of items) {
    // A constant (GraphQL's `__typename`), an ETag or an OData id is no property of the model.
    if (typeof item !== "string" && !("path" in item)) {
      select.push(item);
      continue;
    }
    const [name, ...through] = typeof item === "string" ? [item] : item.path;
    const key = typeof item === "string" ? item : item.as;
    const asFk = name !== undefined && through.length === 0 && navigable(name);
    const output: SelectItem = asFk ? { path: [name], as: fkProperty(key) } : item;
    const outputKey = typeof output === "string" ? output : output.as;
    // `$select=X,X__id` names one property twice.
    if (keys.has(outputKey)) continue;
    keys.add(outputKey);
    select.push(output);
  }
  const expand = options.expand?.map((item): ExpandItem => {
    if (item.count) return item;
    const targetName =
      resource.navigations.get(item.name)?.target ??
      (versionLinks?.get(item.name) as { target?: string } | undefined)?.target;
    const target = targetName === undefined ? undefined : model.resources.get(targetName);
    return target ? { ...item, options: outputOptions(target, item.options, model, query) } : item;
  });
  return { ...options, select, ...(expand ? { expand } : {}) };
}

/** `application(5)`, `/v6/application(5)` or an absolute URL of it: the id of an `@odata.bind`. */
export function boundId(value: unknown, target: string, name: string): number {
  const entity = typeof value === "string" ? /(?:^|\/)([^/()]+)\((\d+)\)$/.exec(value) : null;
  if (!entity || entity[1] !== target) {
    throw new BadRequest(`${name}@odata.bind must name one ${target} by its id: "${target}(<id>)"`);
  }
  return Number(entity[2]);
}

/**
 * A v4 write body in the names of its version: fk properties (`X__id`) and entity references
 * (`"X@odata.bind": "application(5)"`, OData v4 JSON §8.5) set the link `X` itself.
 */
export function v4Body(body: unknown, resource: Resource): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const written: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name.endsWith("@odata.bind")) {
      const link = name.slice(0, -"@odata.bind".length);
      const navigation = resource.navigations.get(link);
      if (!navigation || !isNavigableLink(resource, link)) {
        throw new BadRequest(
          `${name}: '${link}' of ${resource.name} is not a to-one navigation that can be bound`,
        );
      }
      written[link] = value === null ? null : boundId(value, navigation.target, name);
      continue;
    }
    if (name.startsWith("@odata.")) continue;
    written[linkOfFk(resource, name) ?? name] = value;
  }
  return written;
}
