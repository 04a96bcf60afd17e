import type { VersionField, VersionFields } from "../../core/query.ts";
import type { Field, Model, Navigation, Resource } from "../../model/types.ts";
import type { VersionStep, WriteReplyBody } from "./step.ts";

/**
 * An API version as its clients see it: a model with that version's names (for validation and
 * $metadata), and for each name the path that reads it in v6.
 */
export interface VersionView {
  readonly version: string;
  readonly model: Model;
  /** This version's resource name → its v6 name and, per field or navigation, its v6 path. */
  readonly mappings: ReadonlyMap<string, ResourceMapping>;
  /** The fields v6 computes for this version, which its paths name `@<name>`. */
  readonly versionFields: VersionFields;
  readonly writeReply: WriteReplyBody;
}

export interface ResourceMapping {
  readonly v6: string;
  /** A plain rename is a path of one name; a derived field reads through to-one navigations. */
  readonly paths: ReadonlyMap<string, readonly string[]>;
  /** Derived fields a write may set: the v6 link they set, and the target's resource and key field. */
  readonly references: ReadonlyMap<string, Reference>;
}

export interface Reference {
  readonly link: string;
  readonly resource: string;
  readonly key: string;
}

export function currentView(version: string, model: Model): VersionView {
  const mappings = new Map<string, ResourceMapping>();
  for (const resource of model.resources.values()) {
    const names = [...resource.fields.keys(), ...resource.navigations.keys()];
    mappings.set(resource.name, {
      v6: resource.name,
      paths: new Map(names.map((name) => [name, [name]])),
      references: new Map(),
    });
  }
  return { version, model, mappings, versionFields: new Map(), writeReply: "OK" };
}

const invert = (record: Readonly<Record<string, string>> | undefined) =>
  new Map(Object.entries(record ?? {}).map(([older, newer]) => [newer, older]));

/** Builds the view of `step.version` from the view of the version it translates to. */
export function stepView(next: VersionView, step: VersionStep): VersionView {
  const resourceName = invert(step.renamedResources);
  const missingResources = new Set(step.missingResources ?? []);
  const nameOf = (nextName: string) => resourceName.get(nextName) ?? nextName;
  const resources = new Map<string, Resource>();
  const mappings = new Map<string, ResourceMapping>();
  const versionFields = new Map([...next.versionFields].map(([name, fields]) => [name, new Map(fields)]));

  for (const nextResource of next.model.resources.values()) {
    if (missingResources.has(nextResource.name)) continue;
    const nextMapping = next.mappings.get(nextResource.name);
    if (!nextMapping) throw new Error(`versions: no mapping of ${nextResource.name}`);
    const renamed = invert(step.renamed?.[nextResource.name]);
    const missing = new Set(step.missing?.[nextResource.name] ?? []);
    const local = (nextName: string) => renamed.get(nextName) ?? nextName;
    const paths = new Map<string, readonly string[]>();
    const references = new Map<string, Reference>();
    const pathOf = (nextName: string) => nextMapping.paths.get(nextName) ?? [nextName];

    const fields = new Map<string, Field>();
    for (const field of nextResource.fields.values()) {
      if (missing.has(field.name)) continue;
      const name = local(field.name);
      const link = field.link && !missingResources.has(field.link) ? nameOf(field.link) : undefined;
      const { link: _link, ...rest } = field;
      fields.set(name, { ...rest, name, ...(link ? { link } : {}) });
      paths.set(name, pathOf(field.name));
      const reference = nextMapping.references.get(field.name);
      if (reference) references.set(name, reference);
    }
    for (const [name, through] of Object.entries(step.derived?.[nextResource.name] ?? {})) {
      const [first, ...rest] = through;
      const navigation = first === undefined ? undefined : nextResource.navigations.get(first);
      const target = navigation ? next.model.resources.get(navigation.target) : undefined;
      const last = rest[rest.length - 1];
      const end = last === undefined ? undefined : target?.fields.get(last);
      if (!navigation || !target || !end || rest.length !== 1)
        throw new Error(`versions: bad derived field ${name}`);
      fields.set(name, { ...end, name, nullable: true, computed: true, selectedByDefault: true });
      const [link] = pathOf(navigation.name);
      const [key, ...deeper] = next.mappings.get(target.name)?.paths.get(end.name) ?? [end.name];
      const v6Target = next.mappings.get(target.name)?.v6;
      if (!link || !key || deeper.length > 0 || !v6Target)
        throw new Error(`versions: derived field ${name} must read one field of a link`);
      paths.set(name, [link, key]);
      references.set(name, { link, resource: v6Target, key });
    }
    const navigations = new Map<string, Navigation>();
    for (const navigation of nextResource.navigations.values()) {
      if (missing.has(navigation.name) || missingResources.has(navigation.target)) continue;
      const name = local(navigation.name);
      navigations.set(name, { ...navigation, name, target: nameOf(navigation.target) });
      paths.set(name, pathOf(navigation.name));
    }
    // Fields v6 computes for this version: declared once per v6 resource, named `@<name>` in v6.
    const declare = (name: string, field: VersionField) => {
      const own = versionFields.get(nextMapping.v6) ?? new Map<string, VersionField>();
      versionFields.set(nextMapping.v6, own.set(`@${name}`, field));
      paths.set(name, [`@${name}`]);
    };
    for (const [name, link] of Object.entries(step.links?.[nextResource.name] ?? {})) {
      const target = link.target === undefined ? undefined : linkTarget(next, link.target);
      declare(name, {
        kind: "link",
        firstOf: link.firstOf.map((path) => v6PathOf(next, nextResource, path)),
        ...(target ? { target: target.v6 } : {}),
      });
      fields.set(name, linkField(name, target && nameOf(target.name)));
      if (target) navigations.set(name, linkNavigation(name, nameOf(target.name)));
    }
    for (const [name, hiddenName] of Object.entries(step.hidden?.[nextResource.name] ?? {})) {
      const hidden = nextResource.hiddenFields.get(hiddenName);
      if (!hidden) throw new Error(`versions: ${nextResource.name} has no hidden field ${hiddenName}`);
      declare(name, { kind: "hidden", field: hiddenName });
      const { link: _link, ...rest } = hidden;
      fields.set(name, {
        ...rest,
        name,
        computed: true,
        selectedByDefault: fields.get(name)?.selectedByDefault ?? !hidden.computed,
      });
    }
    for (const [field, renames] of Object.entries(step.values?.[nextResource.name] ?? {})) {
      const path = pathOf(field);
      if (path.some((name) => name.startsWith("@")))
        throw new Error(`versions: the values of ${field} are renamed twice`);
      declare(local(field), { kind: "values", path, values: Object.fromEntries(invert(renames)) });
    }
    const toLocal = (names: readonly string[]) => names.filter((name) => !missing.has(name)).map(local);
    const writability = nextResource.writability;
    const name = nameOf(nextResource.name);
    resources.set(name, {
      ...nextResource,
      name,
      fields,
      navigations,
      keys: nextResource.keys.filter((key) => key.every((field) => !missing.has(field))).map(toLocal),
      writability: {
        ...writability,
        create: [
          ...toLocal(writability.create),
          ...derivedWritable(next, step, nextResource, writability.create),
        ],
        update: [
          ...toLocal(writability.update),
          ...derivedWritable(next, step, nextResource, writability.update),
        ],
        required: toLocal(writability.required),
      },
    });
    mappings.set(name, { v6: nextMapping.v6, paths, references });
  }
  return {
    version: step.version,
    model: { resources },
    mappings,
    versionFields,
    writeReply: step.writeReply ?? next.writeReply,
  };
}

/** A path of the `to` version's names, from `resource`, in v6 names. */
function v6PathOf(next: VersionView, resource: Resource, path: readonly string[]): string[] {
  const v6: string[] = [];
  let at: Resource | undefined = resource;
  for (const name of path) {
    const mapped = at && next.mappings.get(at.name)?.paths.get(name);
    if (!at || !mapped) throw new Error(`versions: ${path.join("/")} does not read from ${resource.name}`);
    v6.push(...mapped);
    const navigation = at.navigations.get(name);
    at = navigation && next.model.resources.get(navigation.target);
  }
  return v6;
}

function linkTarget(next: VersionView, target: string): { name: string; v6: string } {
  const v6 = next.mappings.get(target)?.v6;
  if (!v6) throw new Error(`versions: a link points to unknown ${target}`);
  return { name: target, v6 };
}

/** A link's field: an id read as `{"__id"}`, computed, so never written. */
function linkField(name: string, target: string | undefined): Field {
  return {
    name,
    type: "Integer",
    nullable: true,
    hasDefault: false,
    computed: true,
    selectedByDefault: true,
    ...(target ? { link: target } : {}),
  };
}

/** A link's navigation; the planner joins it on the link's value, not on a column. */
function linkNavigation(name: string, target: string): Navigation {
  return { name, target, cardinality: "one", localColumn: name, remoteColumn: "id" };
}

/** A derived field is writable (as a reference by that key) where its link is and the key is unique. */
function derivedWritable(
  next: VersionView,
  step: VersionStep,
  resource: Resource,
  writable: readonly string[],
): string[] {
  return Object.entries(step.derived?.[resource.name] ?? {})
    .filter(([, [link, key]]) => {
      if (link === undefined || !writable.includes(link)) return false;
      // The written value names one row only by a key of its own: a device type's slug is one, a
      // release's commit (unique within its fleet) is not, so v5's is_on__commit stays read-only.
      const target = next.model.resources.get(resource.navigations.get(link)?.target ?? "");
      return target?.keys.some((fields) => fields.length === 1 && fields[0] === key) ?? false;
    })
    .map(([name]) => name);
}
