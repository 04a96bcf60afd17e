import type { ExpandItem, Expr, Key, ODataQuery, QueryOptions } from "../core/query.ts";
import { BadRequest, NotFound } from "../errors.ts";
import type { Model, Navigation, Resource } from "../model/types.ts";
import { parse } from "./parse/parse.ts";
import { fkProperty, isNavigableLink, linkOfFk } from "./v4/fk-properties.ts";

// OData v4 URL Conventions §4.3–4.4, 4.11: a resource path that goes on from an entity, through
// navigations (`device(1)/belongs_to__application`, `application(1)/owns__device(5)`) to an entity,
// a collection, a property, its raw `$value`, a `$count` or `$ref`s. It is read as one query of the
// entity it starts from, expanding each navigation in turn, so the planner, its permissions and
// its one statement are those of any read.

const terminals = ["$value", "$count", "$ref"] as const;
export type PathEnd = (typeof terminals)[number];

const QUOTE = 0x27;
const SLASH = 0x2f;

/** The segments of a URL's resource path (the part before `?`), split at `/` outside literals. */
function segmentsOf(url: string): { segments: string[]; query: string } {
  const mark = url.indexOf("?");
  const path = mark < 0 ? url : url.slice(0, mark);
  const segments: string[] = [];
  let quoted = false;
  let start = path.startsWith("/") ? 1 : 0;
  // By character code and slices: this runs on every OData read, and building each segment a
  // character at a time cost about 3% of a one-row read.
  for (let at = start; at < path.length; at++) {
    const code = path.charCodeAt(at);
    if (code === QUOTE) quoted = !quoted;
    else if (code === SLASH && !quoted) {
      segments.push(path.slice(start, at));
      start = at + 1;
    }
  }
  segments.push(path.slice(start));
  return { segments, query: mark < 0 ? "" : url.slice(mark + 1) };
}

/**
 * Whether a URL goes on past its first segment: not a plain resource, key or `/$count` (nor
 * `$links`, which the parser refuses by name).
 */
export function isResourcePath(url: string): boolean {
  const { segments } = segmentsOf(url);
  // An empty segment (`device/`) is malformed, as the parser says.
  if (segments.length < 2 || segments.includes("$links") || segments.includes("")) return false;
  return !(segments.length === 2 && segments[1] === "$count" && !segments[0]?.includes("("));
}

/** The `$value`, `$count` or `$ref` a resource path ends with, if any. */
export function pathEnd(url: string): PathEnd | undefined {
  const { segments } = segmentsOf(url);
  const last = segments[segments.length - 1];
  return terminals.find((terminal) => terminal === last);
}

/** One navigation the path follows, with its key when it picks one entity of a collection. */
export interface PathStep {
  readonly navigation: Navigation;
  readonly key?: Key;
  /** The key as a filter of the navigation's target. */
  readonly filter?: Expr;
}

/** What a path reads, and where in the answer of its query that sits. */
export interface ResourcePath {
  /** The query of the entity the path starts from, in the names of the request's version. */
  readonly query: ODataQuery;
  readonly steps: readonly PathStep[];
  /** The resource the path ends on (its entity, collection or property's owner). */
  readonly resource: Resource;
  readonly answer: "entity" | "collection" | "property" | "count";
  /** The property read, under the key v4 JSON gives it. */
  readonly property?: string;
  readonly end?: PathEnd;
}

function keyFilter(resource: Resource, key: Key): Expr {
  const values = key.kind === "id" ? [["id", key.value] as const] : key.values;
  const names = values.map(([name]) => name);
  const isKey = resource.keys.some(
    (fields) => fields.length === names.length && fields.every((field) => names.includes(field)),
  );
  if (!isKey) throw new BadRequest(`(${names.join(", ")}) is not a key of ${resource.name}`);
  const conjuncts: Expr[] = values.map(([name, value]) => ({
    kind: "comparison",
    op: "eq",
    left: { kind: "path", segments: [name] },
    right: value,
  }));
  return conjuncts.length === 1
    ? (conjuncts[0] as Expr)
    : { kind: "logical", op: "and", operands: conjuncts };
}

const and = (left: Expr, right: Expr | undefined): Expr =>
  right ? { kind: "logical", op: "and", operands: [left, right] } : left;

/** A segment after the first: a navigation or property name, with an optional key. */
function parseSegment(segment: string): { name: string; key?: Key } {
  if (segment === "") throw new BadRequest("Malformed OData URL: an empty path segment");
  if (segment.startsWith("$")) throw new BadRequest(`${segment} can only end a resource path`);
  const parsed = parse(`/${segment}`);
  return { name: parsed.resource, ...(parsed.key ? { key: parsed.key } : {}) };
}

/** Reads a resource path against the model of the request's version (its names). */
export function resourcePath(url: string, model: Model): ResourcePath {
  const { segments, query } = segmentsOf(url);
  const [first = "", ...rest] = segments;
  if (first === "") throw new BadRequest("Malformed OData URL: an empty path segment");
  const last = rest[rest.length - 1];
  const end = terminals.find((terminal) => terminal === last);
  if (end) rest.pop();
  const root = parse(`/${first}${query === "" ? "" : `?${query}`}`);
  let resource = model.resources.get(root.resource);
  if (!resource) throw new NotFound(`Unknown resource '${root.resource}'`);
  if (!root.key) throw new BadRequest(`${root.resource}/${rest[0] ?? end} needs a key: ${root.resource}(…)`);
  const steps: PathStep[] = [];
  let property: string | undefined;
  rest.forEach((segment, i) => {
    const here = resource as Resource;
    const { name, key } = parseSegment(segment);
    const previous = steps[steps.length - 1];
    if (previous && previous.navigation.cardinality === "many" && !previous.key) {
      throw new BadRequest(
        `${previous.navigation.name} is a collection: pick one, ${previous.navigation.name}(…), to go on`,
      );
    }
    const navigation = here.navigations.get(name);
    if (navigation) {
      if (key && navigation.cardinality === "one")
        throw new BadRequest(`${name} of ${here.name} is one entity: it takes no key`);
      const target = model.resources.get(navigation.target);
      if (!target) throw new NotFound(`Unknown resource '${navigation.target}'`);
      steps.push({ navigation, ...(key ? { key, filter: keyFilter(target, key) } : {}) });
      resource = target;
      return;
    }
    const field = here.fields.has(name) ? name : linkOfFk(here, name);
    if (field === undefined || key || i !== rest.length - 1) {
      throw new BadRequest(`Unknown navigation or property '${name}' of ${here.name} in the resource path`);
    }
    property = field;
  });
  const target = resource as Resource;
  const lastStep = steps[steps.length - 1];
  const isCollection = lastStep?.navigation.cardinality === "many" && !lastStep.key && property === undefined;
  if (end === "$value" && property === undefined) throw new BadRequest("$value follows a property");
  if (end === "$count" && !isCollection) throw new BadRequest("$count follows a collection");
  if (end === "$ref" && property !== undefined)
    throw new BadRequest("$ref follows an entity or a collection");
  const answer =
    property !== undefined ? "property" : end === "$count" ? "count" : isCollection ? "collection" : "entity";
  return {
    query: nestedQuery(
      root,
      steps,
      innermostOptions(root.options, answer, property, end, target),
      answer === "count",
    ),
    steps,
    resource: target,
    answer,
    ...(property !== undefined
      ? { property: isNavigableLink(target, property) ? fkProperty(property) : property }
      : {}),
    ...(end ? { end } : {}),
  };
}

/** The options of the last entity or collection: the URL's own, or what the path's end needs. */
function innermostOptions(
  options: QueryOptions,
  answer: ResourcePath["answer"],
  property: string | undefined,
  end: PathEnd | undefined,
  target: Resource,
): QueryOptions {
  const { format, ...others } = options;
  const kept = format ? { format } : {};
  if (answer === "property") {
    if (Object.keys(others).length > 0)
      throw new BadRequest("A property path takes no query options but $format");
    return { select: ["id", property as string], ...kept };
  }
  if (answer === "count") {
    const { filter, ...rest } = others;
    if (Object.keys(rest).length > 0) throw new BadRequest("A path's /$count takes only $filter");
    return filter ? { filter } : {};
  }
  if (end === "$ref") {
    if (options.select || options.expand) throw new BadRequest("$ref takes no $select or $expand");
    // Each entity as its reference (JSON Format §14), written by the statement.
    return { ...options, select: [{ idBetween: [`${target.name}(`, ")"], as: "@odata.id" }] };
  }
  return options;
}

/** `device(1)/a/b(5)` as `device(1)?$select=id&$expand=a($select=id;$expand=b($filter=id eq 5;…))`. */
function nestedQuery(
  root: ODataQuery,
  steps: readonly PathStep[],
  innermost: QueryOptions,
  counted: boolean,
): ODataQuery {
  const format = root.options.format ? { format: root.options.format } : {};
  let options = steps.length === 0 ? { ...innermost, ...format } : innermost;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i] as PathStep;
    const own = step.filter ? { ...options, filter: and(step.filter, options.filter) } : options;
    const item: ExpandItem = {
      name: step.navigation.name,
      count: counted && i === steps.length - 1,
      options: own,
    };
    options = { select: ["id"], expand: [item], ...format };
  }
  return { resource: root.resource, key: root.key as Key, count: false, options };
}
