import type { Model, ScalarType } from "../model/types.ts";

const edmTypes: Record<ScalarType, string> = {
  Integer: "Edm.Int32",
  Text: "Edm.String",
  Boolean: "Edm.Boolean",
  DateTime: "Edm.DateTimeOffset",
  JSON: "Edm.String",
};

const xml = (text: string) => text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

/**
 * The CSDL (OData v4 EDMX) of every resource: fields, types, keys and navigations. A foreign key is a
 * navigation property (pinejs reads it as `{"__id"}` unless expanded); alternate keys are annotated.
 */
export function metadataDocument(model: Model, namespace = "fleetgate"): string {
  const types: string[] = [];
  const sets: string[] = [];
  for (const resource of model.resources.values()) {
    const members: string[] = ['<Key><PropertyRef Name="id"/></Key>'];
    for (const field of resource.fields.values()) {
      // A link is its navigation property, unless it leads to no resource (an API key's actor).
      if (field.link && resource.navigations.has(field.name)) continue;
      const computed = field.computed ? '<Annotation Term="Org.OData.Core.V1.Computed" Bool="true"/>' : "";
      members.push(
        `<Property Name="${xml(field.name)}" Type="${edmTypes[field.type]}" Nullable="${field.nullable}">${computed}</Property>`,
      );
    }
    const bindings: string[] = [];
    for (const navigation of resource.navigations.values()) {
      const many = navigation.cardinality === "many";
      const nullable = many ? "" : ` Nullable="${resource.fields.get(navigation.name)?.nullable ?? true}"`;
      const type = many
        ? `Collection(${namespace}.${navigation.target})`
        : `${namespace}.${navigation.target}`;
      members.push(`<NavigationProperty Name="${xml(navigation.name)}" Type="${type}"${nullable}/>`);
      bindings.push(
        `<NavigationPropertyBinding Path="${xml(navigation.name)}" Target="${navigation.target}"/>`,
      );
    }
    const alternates = resource.keys.filter((key) => !(key.length === 1 && key[0] === "id"));
    if (alternates.length > 0) {
      const records = alternates
        .map(
          (key) =>
            `<Record><PropertyValue Property="Key"><Collection>${key
              .map((name) => `<Record><PropertyValue Property="Name" PropertyPath="${name}"/></Record>`)
              .join("")}</Collection></PropertyValue></Record>`,
        )
        .join("");
      members.push(
        `<Annotation Term="Org.OData.Core.V1.AlternateKeys"><Collection>${records}</Collection></Annotation>`,
      );
    }
    types.push(`<EntityType Name="${xml(resource.name)}">${members.join("")}</EntityType>`);
    sets.push(
      `<EntitySet Name="${xml(resource.name)}" EntityType="${namespace}.${resource.name}">${bindings.join("")}</EntitySet>`,
    );
  }
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">',
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
