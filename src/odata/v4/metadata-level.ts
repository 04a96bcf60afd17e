import type { ExpandItem, ODataQuery, QueryOptions, SelectItem } from "../../core/query.ts";
import type { Model, Resource } from "../../model/types.ts";

// OData v4 JSON Format §3.1: how much control information a v4 answer carries (negotiated in
// ../negotiation.ts). `minimal` is the context and an entity's ETag; `none` leaves out the context
// and the ETag member (the ETag header stays); `full` adds each entity's type, id, edit link and
// navigation links, which the statement writes as members of each entity (`withFullMetadata`), so no
// level parses the answer again.

const keyOf = (item: SelectItem): string => (typeof item === "string" ? item : item.as);
const isEtag = (item: SelectItem): boolean => typeof item !== "string" && "etag" in item;

/**
 * A translated v4 query (v6 names, each output under the name of the requested version) that also
 * reads each entity's control information of full metadata, at every level of its expansions:
 * `@odata.type`, `@odata.id`, its `@odata.etag` when the query reads one, `@odata.editLink`, then
 * its properties, then a navigation link for each navigation (JSON Format §4.5). `resource` names
 * the query's resource in the requested version's `view`, whose names the annotations carry.
 */
export function withFullMetadata(query: ODataQuery, resource: string, view: Model): ODataQuery {
  const viewed = view.resources.get(resource);
  return viewed ? { ...query, options: fullOptions(query.options, viewed, view) } : query;
}

function fullOptions(options: QueryOptions, resource: Resource, view: Model): QueryOptions {
  // The translators write every level's $select out in full; one left to its default is left as is.
  if (!options.select) return options;
  const { name } = resource;
  const hasId = resource.fields.has("id");
  const link = (as: string, after = ""): SelectItem => ({ idBetween: [`${name}(`, `)${after}`], as });
  const etags = options.select.filter(isEtag);
  const properties = options.select.filter((item) => !isEtag(item));
  const control: SelectItem[] = [
    { constant: `#fleetgate.${name}`, as: "@odata.type" },
    ...(hasId ? [link("@odata.id")] : []),
    ...etags,
    ...(hasId ? [link("@odata.editLink")] : []),
  ];
  const navigationLinks = hasId
    ? [...resource.navigations.keys()].map((navigation) =>
        link(`${navigation}@odata.navigationLink`, `/${navigation}`),
      )
    : [];
  const expand = options.expand?.map((item): ExpandItem => {
    const navigation = resource.navigations.get(item.as ?? item.name);
    const target = navigation && view.resources.get(navigation.target);
    return item.count || !target ? item : { ...item, options: fullOptions(item.options, target, view) };
  });
  // An expansion takes the place of a property of its name, else follows the properties.
  const members = [...control, ...properties].map(keyOf);
  const expanded = (expand ?? []).map((item) => item.as ?? item.name).filter((key) => !members.includes(key));
  return {
    ...options,
    select: [...control, ...properties, ...navigationLinks],
    ...(expand ? { expand } : {}),
    keyOrder: [...members, ...expanded, ...navigationLinks.map(keyOf)],
  };
}
