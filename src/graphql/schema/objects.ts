import type { GraphQLResolveInfo } from "graphql";
import type { ScalarType } from "../../model/types.ts";
import { listArguments } from "./arguments.ts";
import { type Builder, type InputRef, type ObjectRef, type ObjectRefs, scalarOf } from "./builder.ts";
import type { GraphQLModel, ObjectSpec, Row } from "./graphql-model.ts";
import { relationKey } from "./selection.ts";
import { operatorsOf } from "./where.ts";

// The object types and the inputs that read them (`where`, `orderBy`), one of each per table,
// generated from the registry: a field added to the model appears here as it does in OData.

const filterNames: Record<ScalarType, string> = {
  Integer: "IntFilter",
  Text: "StringFilter",
  Boolean: "BooleanFilter",
  DateTime: "DateTimeFilter",
  JSON: "JSONFilter",
};

const operatorDescriptions: Record<string, string> = {
  eq: "equal to (null: is null)",
  ne: "not equal to (null: is not null)",
  in: "equal to one of",
  gt: "greater than",
  ge: "greater than or equal to",
  lt: "less than",
  le: "less than or equal to",
  contains: "contains the text",
  startsWith: "starts with the text",
  endsWith: "ends with the text",
  isNull: "true: is null; false: is not null",
};

function scalarFilters(builder: Builder): Map<ScalarType, InputRef> {
  const filters = new Map<ScalarType, InputRef>();
  for (const [type, operators] of Object.entries(operatorsOf) as [ScalarType, readonly string[]][]) {
    if (operators.length === 0) continue;
    const scalar = scalarOf[type];
    const ref = builder.inputRef<Row, false>(filterNames[type]);
    ref.implement({
      description: `Conditions on a ${scalar} field, ANDed`,
      fields: (t) =>
        Object.fromEntries(
          operators.map((operator) => {
            const description = operatorDescriptions[operator];
            if (operator === "isNull") return [operator, t.field({ type: "Boolean", description })];
            if (operator === "in")
              return [
                operator,
                t.field({ type: [scalar], required: { list: false, items: true }, description }),
              ];
            return [operator, t.field({ type: scalar, description })];
          }),
        ) as never,
    });
    filters.set(type, ref);
  }
  return filters;
}

export function objectTypes(builder: Builder, graph: GraphQLModel): ObjectRefs {
  const direction = builder.enumType("OrderDirection", { values: ["ASC", "DESC"] as const });
  const filters = scalarFilters(builder);
  const objects = new Map<string, ObjectRef>();
  const wheres = new Map<string, InputRef>();
  const listWheres = new Map<string, InputRef>();
  const orderBys = new Map<string, InputRef>();
  const specs = [...graph.objects.values()];
  for (const spec of specs) {
    objects.set(spec.name, builder.objectRef<Row>(spec.name));
    wheres.set(spec.name, builder.inputRef<Row, false>(`${spec.name}Where`));
    listWheres.set(spec.name, builder.inputRef<Row, false>(`${spec.name}ListWhere`));
    orderBys.set(spec.name, builder.inputRef<Row, false>(`${spec.name}OrderBy`));
  }
  const target = <T>(refs: Map<string, T>, resource: string): T =>
    refs.get(graph.objectOf(resource).name) as T;

  for (const spec of specs) {
    const where = wheres.get(spec.name) as InputRef;
    implementObject(builder, spec, graph, { objects, wheres, orderBys });
    (listWheres.get(spec.name) as InputRef).implement({
      description: `Conditions on the ${spec.name} rows of a relation`,
      fields: (t) => ({
        some: t.field({ type: where, description: "at least one row matches" }),
        every: t.field({ type: where, description: "every row matches (true when there are none)" }),
        none: t.field({ type: where, description: "no row matches" }),
      }),
    });
    where.implement({
      description: `Conditions on ${spec.name} rows; the fields given are ANDed`,
      fields: (t) => {
        const fields: Record<string, ReturnType<typeof t.field>> = {
          AND: t.field({ type: [where] }),
          OR: t.field({ type: [where] }),
          NOT: t.field({ type: where }),
        };
        for (const [name, member] of spec.members) {
          if (member.kind === "field" || member.kind === "link") {
            const filter = filters.get(member.field.type);
            if (filter) fields[name] = t.field({ type: filter });
          } else if (member.kind === "toOne") fields[name] = t.field({ type: target(wheres, member.target) });
          else if (member.kind === "toMany")
            fields[name] = t.field({ type: target(listWheres, member.target) });
        }
        return fields as never;
      },
    });
    (orderBys.get(spec.name) as InputRef).implement({
      description: `One field to order ${spec.name} rows by (the id breaks ties)`,
      fields: (t) => {
        const fields: Record<string, ReturnType<typeof t.field>> = {};
        for (const [name, member] of spec.members) {
          if ((member.kind === "field" || member.kind === "link") && member.field.type !== "JSON")
            fields[name] = t.field({ type: direction });
          else if (member.kind === "toOne") fields[name] = t.field({ type: target(orderBys, member.target) });
        }
        return fields as never;
      },
    });
  }
  return { objects, wheres, orderBys };
}

/** A relation's value was read under its response key (see SelectionPlanner). */
const relation = (row: Row, _args: unknown, _context: unknown, info: GraphQLResolveInfo) =>
  row[relationKey(String(info.path.key))] as never;

function implementObject(builder: Builder, spec: ObjectSpec, graph: GraphQLModel, refs: ObjectRefs): void {
  const ref = refs.objects.get(spec.name) as ObjectRef;
  const target = <T>(map: ReadonlyMap<string, T>, resource: string): T =>
    map.get(graph.objectOf(resource).name) as T;
  ref.implement({
    fields: (t) => {
      const fields: Record<string, ReturnType<typeof t.field>> = {};
      for (const [name, member] of spec.members) {
        switch (member.kind) {
          case "field": {
            const { field } = member;
            fields[name] = t.field({
              type: scalarOf[field.type],
              // An owner-only field reads as null on rows the caller may read but not own.
              nullable: field.nullable || field.computed || field.ownerOnly === true,
              resolve: (row) => row[name] as never,
            });
            break;
          }
          case "link":
            fields[name] = t.field({
              type: "Int",
              nullable: member.field.nullable || member.field.ownerOnly === true,
              description: `The id behind ${name.slice(0, -2)}`,
              resolve: (row) => row[name] as never,
            });
            break;
          case "toOne":
            fields[name] = t.field({
              type: target(refs.objects, member.target),
              nullable: true,
              resolve: relation,
            });
            break;
          case "toMany":
            fields[name] = t.field({
              type: [target(refs.objects, member.target)],
              args: listArguments(builder, refs, graph.objectOf(member.target)),
              resolve: relation,
            });
            break;
          case "count":
            fields[name] = t.field({
              type: "Int",
              description: `How many ${name.slice(0, -"Count".length)} rows match`,
              args: { where: t.arg({ type: target(refs.wheres, member.target) }) },
              resolve: relation,
            });
            break;
        }
      }
      return fields as never;
    },
  });
}
