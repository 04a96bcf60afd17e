import type { Field, Model, Navigation, Resource, ScalarType } from "../../model/types.ts";
import { capabilityAnnotations, containerAnnotations, vocabularyReferences } from "./capabilities.ts";
import { fkProperty, isNavigableLink } from "./fk-properties.ts";

const edmTypes: Record<ScalarType, string> = {
  Integer: "Edm.Int32",
  Text: "Edm.String",
  Boolean: "Edm.Boolean",
  DateTime: "Edm.DateTimeOffset",
  JSON: "Edm.String",
};

export const xml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

const COMPUTED = '<Annotation Term="Org.OData.Core.V1.Computed" Bool="true"/>';

/**
 * The navigation of `target` that is the other side of `navigation` (CSDL v4.0 §7.1.4 Partner): the
 * same join read the other way. None when there is no such navigation, or more than one.
 */
function partnerOf(model: Model, resource: Resource, navigation: Navigation): string | undefined {
  if (navigation.through) return undefined;
  const target = model.resources.get(navigation.target);
  const candidates = [...(target?.navigations.values() ?? [])].filter(
    (other) =>
      other.target === resource.name &&
      !other.through &&
      other.cardinality !== navigation.cardinality &&
      other.localColumn === navigation.remoteColumn &&
      other.remoteColumn === navigation.localColumn,
  );
  return candidates.length === 1 ? candidates[0]?.name : undefined;
}

function navigationProperty(model: Model, resource: Resource, navigation: Navigation, namespace: string) {
  const many = navigation.cardinality === "many";
  const type = many ? `Collection(${namespace}.${navigation.target})` : `${namespace}.${navigation.target}`;
  const nullable = many ? "" : ` Nullable="${resource.fields.get(navigation.name)?.nullable ?? true}"`;
  const partner = partnerOf(model, resource, navigation);
  const partnerAttribute = partner === undefined ? "" : ` Partner="${xml(partner)}"`;
  // The id that the navigation follows is the fk property (./fk-properties.ts).
  const constraint =
    isNavigableLink(resource, navigation.name) && navigation.remoteColumn === "id"
      ? `<ReferentialConstraint Property="${xml(fkProperty(navigation.name))}" ReferencedProperty="id"/>`
      : "";
  const head = `<NavigationProperty Name="${xml(navigation.name)}" Type="${type}"${nullable}${partnerAttribute}`;
  return constraint === "" ? `${head}/>` : `${head}>${constraint}</NavigationProperty>`;
}

function alternateKeys(resource: Resource): string {
  const alternates = resource.keys.filter((key) => !(key.length === 1 && key[0] === "id"));
  if (alternates.length === 0) return "";
  const records = alternates
    .map(
      (key) =>
        `<Record><PropertyValue Property="Key"><Collection>${key
          .map((name) => `<Record><PropertyValue Property="Name" PropertyPath="${name}"/></Record>`)
          .join("")}</Collection></PropertyValue></Record>`,
    )
    .join("");
  return `<Annotation Term="Org.OData.Core.V1.AlternateKeys"><Collection>${records}</Collection></Annotation>`;
}

const core = (term: string) => `<Annotation Term="Org.OData.Core.V1.${term}" Bool="true"/>`;
const READ_ONLY =
  '<Annotation Term="Org.OData.Core.V1.Permissions" EnumMember="Org.OData.Core.V1.Permission/Read"/>';

/**
 * What a client may write of a property, as the write core decides it (Core vocabulary): the
 * server assigns what no caller writes (`id`, `created_at`, `actor`, computed fields: Computed,
 * read-only), what is given once cannot change (Immutable), and a property that is never null yet
 * not required (a uuid, a time) is computed when a create leaves it out (ComputedDefaultValue). A
 * generated client then leaves them out of its create and update types.
 */
function propertyAnnotations(resource: Resource, field: Field): string {
  const creatable = resource.writability.create.includes(field.name);
  const updatable = resource.writability.update.includes(field.name);
  if (field.computed || (!creatable && !updatable)) return `${COMPUTED}${READ_ONLY}`;
  // Not required, yet never null: the database's default or the resource's rules fill it in.
  const filledIn =
    field.hasDefault || (!field.nullable && !resource.writability.required.includes(field.name));
  const computedDefault =
    creatable && filledIn && field.defaultValue === undefined ? core("ComputedDefaultValue") : "";
  return `${creatable && !updatable ? core("Immutable") : ""}${computedDefault}`;
}

/** CSDL v4.0 §6.2.7: a constant default of the column, in the property's type. */
const defaultValue = (field: Field) =>
  field.defaultValue === undefined ? "" : ` DefaultValue="${xml(String(field.defaultValue))}"`;

function entityType(model: Model, resource: Resource, namespace: string): string {
  const members: string[] = ['<Key><PropertyRef Name="id"/></Key>'];
  for (const field of resource.fields.values()) {
    const name = isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name;
    members.push(
      `<Property Name="${xml(name)}" Type="${edmTypes[field.type]}" Nullable="${field.nullable}"${defaultValue(field)}>${propertyAnnotations(resource, field)}</Property>`,
    );
  }
  for (const navigation of resource.navigations.values()) {
    members.push(navigationProperty(model, resource, navigation, namespace));
  }
  members.push(alternateKeys(resource));
  return `<EntityType Name="${xml(resource.name)}">${members.join("")}</EntityType>`;
}

export interface MetadataOptions {
  readonly namespace?: string;
  /** The deepest $expand a read may have (limits.ts), stated as ExpandRestrictions/MaxLevels. */
  readonly maxExpandDepth?: number;
  /** The root answers `$batch` (./batch/). */
  readonly batch?: boolean;
}

/**
 * The CSDL (OData v4 EDMX) of every resource: fields, types, keys and navigations. A foreign key is
 * a navigation with a ReferentialConstraint on its id property `<navigation>__id`; alternate keys and
 * what each entity set supports (Org.OData.Capabilities.V1) are annotated.
 */
export function metadataDocument(model: Model, options: MetadataOptions = {}): string {
  const namespace = options.namespace ?? "fleetgate";
  const types: string[] = [];
  const sets: string[] = [];
  for (const resource of model.resources.values()) {
    types.push(entityType(model, resource, namespace));
    const bindings = [...resource.navigations.values()].map(
      (navigation) =>
        `<NavigationPropertyBinding Path="${xml(navigation.name)}" Target="${navigation.target}"/>`,
    );
    sets.push(
      `<EntitySet Name="${xml(resource.name)}" EntityType="${namespace}.${resource.name}">${bindings.join("")}${capabilityAnnotations(resource, options.maxExpandDepth)}</EntitySet>`,
    );
  }
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">',
    vocabularyReferences,
    "<edmx:DataServices>",
    `<Schema Namespace="${namespace}" xmlns="http://docs.oasis-open.org/odata/ns/edm">`,
    ...types,
    `<EntityContainer Name="${namespace}">${sets.join("")}${containerAnnotations(options.batch === true)}</EntityContainer>`,
    "</Schema>",
    "</edmx:DataServices>",
    "</edmx:Edmx>",
  ].join("\n");
}

/** The OData v4 JSON service document of a version: each resource as an entity set, by its URL. */
export function serviceDocument(version: string, model: Model): string {
  return JSON.stringify({
    "@odata.context": `/${version}/$metadata`,
    value: [...model.resources.values()].map((resource) => ({
      name: resource.name,
      kind: "EntitySet",
      url: resource.name,
    })),
  });
}
