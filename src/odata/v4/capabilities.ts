import { etagFields } from "../../core/etag.ts";
import type { Resource } from "../../model/types.ts";
import { fkProperty, isNavigableLink } from "./fk-properties.ts";

const vocabularies = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies";

/** The vocabularies $metadata uses, referenced as CSDL v4.0 §3.3 requires of a document that uses their terms. */
export const vocabularyReferences = ["Core", "Capabilities"]
  .map(
    (name) =>
      `<edmx:Reference Uri="${vocabularies}/Org.OData.${name}.V1.xml"><edmx:Include Namespace="Org.OData.${name}.V1"/></edmx:Reference>`,
  )
  .join("\n");

const term = (name: string, record: string) =>
  `<Annotation Term="Org.OData.Capabilities.V1.${name}"><Record>${record}</Record></Annotation>`;
const bool = (property: string, value: boolean) => `<PropertyValue Property="${property}" Bool="${value}"/>`;
const paths = (property: string, names: readonly string[]) =>
  names.length === 0
    ? ""
    : `<PropertyValue Property="${property}"><Collection>${names
        .map((name) => `<PropertyPath>${name}</PropertyPath>`)
        .join("")}</Collection></PropertyValue>`;

/**
 * What an entity set supports (Org.OData.Capabilities.V1), as the write core and the planner decide
 * it: a resource with no writable field takes no POST or PATCH; JSON documents cannot be compared
 * or ordered (plan-expr.ts). A caller's permissions narrow this further, row by row.
 */
export function capabilityAnnotations(resource: Resource, maxExpandDepth: number | undefined): string {
  const json = [...resource.fields.values()]
    .filter((field) => field.type === "JSON")
    .map((field) => (isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name));
  return [
    term("InsertRestrictions", bool("Insertable", resource.writability.create.length > 0)),
    term("UpdateRestrictions", bool("Updatable", resource.writability.update.length > 0)),
    term("DeleteRestrictions", bool("Deletable", resource.writability.deletable)),
    term("FilterRestrictions", `${bool("Filterable", true)}${paths("NonFilterableProperties", json)}`),
    term("SortRestrictions", `${bool("Sortable", true)}${paths("NonSortableProperties", json)}`),
    term(
      "ExpandRestrictions",
      `${bool("Expandable", resource.navigations.size > 0)}${
        maxExpandDepth === undefined ? "" : `<PropertyValue Property="MaxLevels" Int="${maxExpandDepth}"/>`
      }`,
    ),
    term("CountRestrictions", bool("Countable", true)),
    // No $search: its default in the vocabulary is "searchable".
    term("SearchRestrictions", bool("Searchable", false)),
    '<Annotation Term="Org.OData.Capabilities.V1.TopSupported" Bool="true"/>',
    '<Annotation Term="Org.OData.Capabilities.V1.SkipSupported" Bool="true"/>',
    concurrencyAnnotation(resource),
  ].join("");
}

/**
 * Org.OData.Core.V1.OptimisticConcurrency on an entity set that can be changed or deleted: the
 * properties its ETag is computed from (core/etag.ts), which If-Match compares. The write core
 * honours If-Match; it does not require it, as pinejs's clients send none.
 */
function concurrencyAnnotation(resource: Resource): string {
  if (resource.writability.update.length === 0 && !resource.writability.deletable) return "";
  const properties = etagFields(resource).map((field) =>
    isNavigableLink(resource, field.name) ? fkProperty(field.name) : field.name,
  );
  return `<Annotation Term="Org.OData.Core.V1.OptimisticConcurrency"><Collection>${properties
    .map((name) => `<PropertyPath>${name}</PropertyPath>`)
    .join("")}</Collection></Annotation>`;
}

/**
 * What the service as a whole supports, on its entity container: `$batch` (whose vocabulary default
 * is "supported") only where the root answers it, in OData 4.01's JSON form and OData 4.0's
 * multipart/mixed form, each atomicity group or change set one transaction (./batch/); `$<Content-ID>`
 * references only at the start of a URL, to an earlier request of the same change set; nothing of the Capabilities tags it leaves unsaid (cross joins,
 * asynchronous requests, key-as-segment), whose absence means "not supported".
 */
export function containerAnnotations(batch: boolean): string {
  const supported = `<Annotation Term="Org.OData.Capabilities.V1.BatchSupported" Bool="${batch}"/>`;
  if (!batch) return supported;
  return `${supported}${term(
    "BatchSupport",
    [
      bool("Supported", true),
      bool("ContinueOnErrorSupported", false),
      // `$1` in a request's URL (a change set's, a JSON batch's group or dependsOn), not in a body's
      // @odata.bind; a multipart batch's across change sets neither, so none is said for both forms.
      bool("ReferencesInRequestBodiesSupported", false),
      bool("ReferencesAcrossChangeSetsSupported", false),
      bool("EtagReferencesSupported", false),
      bool("RequestBodyOrderSupported", true),
      '<PropertyValue Property="SupportedFormats"><Collection><String>application/json</String><String>multipart/mixed</String></Collection></PropertyValue>',
    ].join(""),
  )}`;
}
