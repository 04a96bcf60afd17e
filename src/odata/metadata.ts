import type { Model, Navigation, Resource, ScalarType } from "../model/types.ts";
import { capabilityAnnotations, vocabularyReferences } from "./capabilities.ts";
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

function entityType(model: Model, resource: Resource, namespace: string): string {
  const members: string[] = ['<Key><PropertyRef Name="id"/></Key>'];
  for (const field of resource.fields.values()) {
    const computed = field.computed ? COMPUTED : "";
    const name = isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name;
    members.push(
      `<Property Name="${xml(name)}" Type="${edmTypes[field.type]}" Nullable="${field.nullable}">${computed}</Property>`,
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
    `<EntityContainer Name="${namespace}">${sets.join("")}</EntityContainer>`,
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
