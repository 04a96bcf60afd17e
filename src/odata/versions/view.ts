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

/** What the step of every resource shares: the view it starts from and the names of this version. */
interface StepContext {
  readonly next: VersionView;
  readonly step: VersionStep;
  readonly missingResources: ReadonlySet<string>;
  /** A resource's name in this version, from its name in the next. */
  readonly nameOf: (nextName: string) => string;
  /** The fields v6 computes for the versions up to this one, added to as resources are stepped. */
  readonly versionFields: Map<string, Map<string, VersionField>>;
}

/** One resource being stepped: what it is in the next version, and what it becomes in this one. */
interface ResourceDraft {
  readonly from: Resource;
  readonly nextMapping: ResourceMapping;
  readonly missing: ReadonlySet<string>;
  /** A field's or navigation's name in this version, from its name in the next. */
  readonly local: (nextName: string) => string;
  /** The v6 path of a name of the next version. */
  readonly pathOf: (nextName: string) => readonly string[];
  readonly fields: Map<string, Field>;
  readonly navigations: Map<string, Navigation>;
  readonly paths: Map<string, readonly string[]>;
  readonly references: Map<string, Reference>;
}

/** Builds the view of `step.version` from the view of the version it translates to. */
export function stepView(next: VersionView, step: VersionStep): VersionView {
  const resourceName = invert(step.renamedResources);
  const context: StepContext = {
    next,
    step,
    missingResources: new Set(step.missingResources ?? []),
    nameOf: (nextName) => resourceName.get(nextName) ?? nextName,
    versionFields: new Map([...next.versionFields].map(([name, fields]) => [name, new Map(fields)])),
  };
  const resources = new Map<string, Resource>();
  const mappings = new Map<string, ResourceMapping>();
  for (const nextResource of next.model.resources.values()) {
    if (context.missingResources.has(nextResource.name)) continue;
    const draft = stepResource(context, nextResource);
    const name = context.nameOf(nextResource.name);
    resources.set(name, steppedResource(context, draft, name));
    mappings.set(name, { v6: draft.nextMapping.v6, paths: draft.paths, references: draft.references });
  }
  return {
    version: step.version,
    model: { resources },
    mappings,
    versionFields: context.versionFields,
    writeReply: step.writeReply ?? next.writeReply,
  };
}

/** A resource's fields, navigations and paths in this version, in the order $metadata lists them. */
function stepResource(context: StepContext, from: Resource): ResourceDraft {
  const { next, step } = context;
  const nextMapping = next.mappings.get(from.name);
  if (!nextMapping) throw new Error(`versions: no mapping of ${from.name}`);
  const renamed = invert(step.renamed?.[from.name]);
  const draft: ResourceDraft = {
    from,
    nextMapping,
    missing: new Set(step.missing?.[from.name] ?? []),
    local: (nextName) => renamed.get(nextName) ?? nextName,
    pathOf: (nextName) => nextMapping.paths.get(nextName) ?? [nextName],
    fields: new Map(),
    navigations: new Map(),
    paths: new Map(),
    references: new Map(),
  };
  stepFields(context, draft);
  addDerived(context, draft);
  stepNavigations(context, draft);
  addLinks(context, draft);
  addHidden(context, draft);
  addValues(context, draft);
  return draft;
}

function stepFields({ missingResources, nameOf }: StepContext, draft: ResourceDraft): void {
  for (const field of draft.from.fields.values()) {
    if (draft.missing.has(field.name)) continue;
    const name = draft.local(field.name);
    const link = field.link && !missingResources.has(field.link) ? nameOf(field.link) : undefined;
    const { link: _link, ...rest } = field;
    draft.fields.set(name, { ...rest, name, ...(link ? { link } : {}) });
    draft.paths.set(name, draft.pathOf(field.name));
    const reference = draft.nextMapping.references.get(field.name);
    if (reference) draft.references.set(name, reference);
  }
}

/** Fields only this version has, each read through one to-one navigation of the next. */
function addDerived({ next, step }: StepContext, draft: ResourceDraft): void {
  const { from } = draft;
  for (const [name, through] of Object.entries(step.derived?.[from.name] ?? {})) {
    const [first, ...rest] = through;
    const navigation = first === undefined ? undefined : from.navigations.get(first);
    const target = navigation ? next.model.resources.get(navigation.target) : undefined;
    const last = rest[rest.length - 1];
    const end = last === undefined ? undefined : target?.fields.get(last);
    if (!navigation || !target || !end || rest.length !== 1)
      throw new Error(`versions: bad derived field ${name}`);
    draft.fields.set(name, { ...end, name, nullable: true, computed: true, selectedByDefault: true });
    const [link] = draft.pathOf(navigation.name);
    const [key, ...deeper] = next.mappings.get(target.name)?.paths.get(end.name) ?? [end.name];
    const v6Target = next.mappings.get(target.name)?.v6;
    if (!link || !key || deeper.length > 0 || !v6Target)
      throw new Error(`versions: derived field ${name} must read one field of a link`);
    draft.paths.set(name, [link, key]);
    draft.references.set(name, { link, resource: v6Target, key });
  }
}

function stepNavigations({ missingResources, nameOf }: StepContext, draft: ResourceDraft): void {
  for (const navigation of draft.from.navigations.values()) {
    if (draft.missing.has(navigation.name) || missingResources.has(navigation.target)) continue;
    const name = draft.local(navigation.name);
    draft.navigations.set(name, { ...navigation, name, target: nameOf(navigation.target) });
    draft.paths.set(name, draft.pathOf(navigation.name));
  }
}

// Fields v6 computes for this version: declared once per v6 resource, named `@<name>` in v6.
function declare(context: StepContext, draft: ResourceDraft, name: string, field: VersionField): void {
  const v6 = draft.nextMapping.v6;
  const own = context.versionFields.get(v6) ?? new Map<string, VersionField>();
  context.versionFields.set(v6, own.set(`@${name}`, field));
  draft.paths.set(name, [`@${name}`]);
}

function addLinks(context: StepContext, draft: ResourceDraft): void {
  const { next, step, nameOf } = context;
  for (const [name, link] of Object.entries(step.links?.[draft.from.name] ?? {})) {
    const target = link.target === undefined ? undefined : linkTarget(next, link.target);
    declare(context, draft, name, {
      kind: "link",
      firstOf: link.firstOf.map((path) => v6PathOf(next, draft.from, path)),
      ...(target ? { target: target.v6 } : {}),
    });
    draft.fields.set(name, linkField(name, target && nameOf(target.name)));
    if (target) draft.navigations.set(name, linkNavigation(name, nameOf(target.name)));
  }
}

function addHidden(context: StepContext, draft: ResourceDraft): void {
  const { from, fields } = draft;
  for (const [name, hiddenName] of Object.entries(context.step.hidden?.[from.name] ?? {})) {
    const hidden = from.hiddenFields.get(hiddenName);
    if (!hidden) throw new Error(`versions: ${from.name} has no hidden field ${hiddenName}`);
    declare(context, draft, name, { kind: "hidden", field: hiddenName });
    const { link: _link, ...rest } = hidden;
    fields.set(name, {
      ...rest,
      name,
      computed: true,
      selectedByDefault: fields.get(name)?.selectedByDefault ?? !hidden.computed,
    });
  }
}

function addValues(context: StepContext, draft: ResourceDraft): void {
  for (const [field, renames] of Object.entries(context.step.values?.[draft.from.name] ?? {})) {
    const path = draft.pathOf(field);
    if (path.some((name) => name.startsWith("@")))
      throw new Error(`versions: the values of ${field} are renamed twice`);
    declare(context, draft, draft.local(field), {
      kind: "values",
      path,
      values: Object.fromEntries(invert(renames)),
    });
  }
}

/** The resource as this version names it: its keys and writable fields in this version's names. */
function steppedResource({ next, step }: StepContext, draft: ResourceDraft, name: string): Resource {
  const { from, missing, fields, navigations } = draft;
  const toLocal = (names: readonly string[]) => names.filter((each) => !missing.has(each)).map(draft.local);
  const writability = from.writability;
  return {
    ...from,
    name,
    fields,
    navigations,
    keys: from.keys.filter((key) => key.every((field) => !missing.has(field))).map(toLocal),
    writability: {
      ...writability,
      create: [...toLocal(writability.create), ...derivedWritable(next, step, from, writability.create)],
      update: [...toLocal(writability.update), ...derivedWritable(next, step, from, writability.update)],
      required: toLocal(writability.required),
    },
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
