import type { Field, Model, Navigation, Resource } from "../../model/types.ts";
import type { VersionStep } from "./step.ts";

/**
 * An API version as its clients see it: a model with that version's names (for validation and
 * $metadata), and for each name the path that reads it in v6.
 */
export interface VersionView {
  readonly version: string;
  readonly model: Model;
  /** This version's resource name → its v6 name and, per field or navigation, its v6 path. */
  readonly mappings: ReadonlyMap<string, ResourceMapping>;
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
  return { version, model, mappings };
}

const invert = (record: Readonly<Record<string, string>> | undefined) =>
  new Map(Object.entries(record ?? {}).map(([older, newer]) => [newer, older]));

/** Builds the view of `step.version` from the view of the version above it. */
export function olderView(next: VersionView, step: VersionStep): VersionView {
  const resourceName = invert(step.renamedResources);
  const missingResources = new Set(step.missingResources ?? []);
  const nameOf = (nextName: string) => resourceName.get(nextName) ?? nextName;
  const resources = new Map<string, Resource>();
  const mappings = new Map<string, ResourceMapping>();

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
        create: [...toLocal(writability.create), ...derivedWritable(step, nextResource, writability.create)],
        update: [...toLocal(writability.update), ...derivedWritable(step, nextResource, writability.update)],
        required: toLocal(writability.required),
      },
    });
    mappings.set(name, { v6: nextMapping.v6, paths, references });
  }
  return { version: step.version, model: { resources }, mappings };
}

/** A derived field is writable (as a reference by that key) where its link is. */
function derivedWritable(step: VersionStep, resource: Resource, writable: readonly string[]): string[] {
  return Object.entries(step.derived?.[resource.name] ?? {})
    .filter(([, [link]]) => link !== undefined && writable.includes(link))
    .map(([name]) => name);
}
