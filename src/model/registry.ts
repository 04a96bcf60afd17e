import datamodel from "../generated/datamodel.json" with { type: "json" };
import {
  computedFields,
  hiddenColumns,
  hiddenComputedFields,
  internalLinks,
  internalTables,
  linkTableNavigations,
  ownerOnlyFields,
  resourceAliases,
  reverseNavigations,
  writableFields,
  writeOnlyFields,
} from "./annotations.ts";
import type { Field, Model, Navigation, Resource, ScalarType } from "./types.ts";

// The parts of Prisma's DMMF the registry reads (written by scripts/write-datamodel.mjs).
interface DmmfField {
  name: string;
  kind: string;
  type: string;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  hasDefaultValue: boolean;
  /** A constant, or a function such as `{ name: "autoincrement" }`. */
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  uniqueFields: string[][];
}
export interface Datamodel {
  models: DmmfModel[];
}

/** A column's default when it is a constant (not `autoincrement()`, `now()`, `dbgenerated(…)`). */
function constantDefault(field: DmmfField): { defaultValue?: string | number | boolean } {
  const value = field.default;
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? { defaultValue: value }
    : {};
}

const scalarTypes: Record<string, ScalarType> = {
  Int: "Integer",
  String: "Text",
  Boolean: "Boolean",
  DateTime: "DateTime",
  Json: "JSON",
};

/** Builds the OData resources from schema.prisma's model plus the annotation table. */
export function buildModel(source: Datamodel = datamodel as unknown as Datamodel): Model {
  const tableOf = new Map(source.models.map((model) => [model.name, model.dbName ?? model.name]));
  const exposed = source.models.filter((model) => !internalTables.has(tableOf.get(model.name) ?? ""));
  const fieldsOf = new Map<string, Map<string, Field>>();
  const hiddenOf = new Map<string, Map<string, Field>>();
  const navigationsOf = new Map<string, Map<string, Navigation>>();
  for (const model of exposed) {
    const table = tableOf.get(model.name) as string;
    fieldsOf.set(table, new Map());
    hiddenOf.set(table, new Map());
    navigationsOf.set(table, new Map());
  }

  const addNavigation = (table: string, navigation: Navigation) => {
    const navigations = navigationsOf.get(table) as Map<string, Navigation>;
    if (
      navigations.has(navigation.name) ||
      (fieldsOf.get(table)?.has(navigation.name) && navigation.cardinality === "many")
    ) {
      throw new Error(`model: ${table}.${navigation.name} is defined twice`);
    }
    navigations.set(navigation.name, navigation);
  };

  for (const model of exposed) {
    const table = tableOf.get(model.name) as string;
    const hidden = new Set(hiddenColumns[table] ?? []);
    const fields = fieldsOf.get(table) as Map<string, Field>;
    // A foreign key column → the table it points to.
    const links = new Map<string, string>();
    for (const relation of model.fields) {
      const [column] = relation.relationFromFields ?? [];
      if (relation.kind === "object" && column) links.set(column, tableOf.get(relation.type) as string);
    }
    for (const field of model.fields) {
      if (field.kind !== "scalar") continue;
      const type = scalarTypes[field.type];
      if (!type) throw new Error(`model: ${table}.${field.name} has unsupported type ${field.type}`);
      if (hidden.has(field.name)) {
        hiddenOf.get(table)?.set(field.name, {
          name: field.name,
          type,
          nullable: !field.isRequired,
          hasDefault: field.hasDefaultValue,
          computed: false,
          selectedByDefault: false,
        });
        continue;
      }
      const target = links.get(field.name);
      const internal = target !== undefined && internalTables.has(target);
      const link = target && (!internal || internalLinks.has(`${table}.${field.name}`)) ? target : undefined;
      fields.set(field.name, {
        name: field.name,
        type,
        nullable: !field.isRequired,
        hasDefault: field.hasDefaultValue,
        ...constantDefault(field),
        computed: false,
        selectedByDefault: true,
        ...(link ? { link } : {}),
        ...(ownerOnlyFields[table]?.includes(field.name) ? { ownerOnly: true } : {}),
      });
      // A link to an internal table reads as `{"__id"}` but leads nowhere: no navigation.
      if (!link || internal) continue;
      addNavigation(table, {
        name: field.name,
        target: link,
        cardinality: "one",
        localColumn: field.name,
        remoteColumn: "id",
      });
      const reverse = reverseNavigations[`${table}.${field.name}`];
      if (!reverse)
        throw new Error(`model: name the reverse navigation of ${table}.${field.name} in annotations.ts`);
      addNavigation(link, {
        name: reverse,
        target: table,
        cardinality: "many",
        localColumn: "id",
        remoteColumn: field.name,
      });
    }
    for (const [name, computed] of Object.entries(computedFields[table] ?? {})) {
      fields.set(name, { name, ...computed, hasDefault: false, computed: true });
    }
    for (const [name, computed] of Object.entries(hiddenComputedFields[table] ?? {})) {
      hiddenOf.get(table)?.set(name, { name, ...computed, hasDefault: false, computed: true });
    }
    // Written, never read: kept with the hidden columns, which only writes (and system reads) see.
    for (const [name, { type }] of Object.entries(writeOnlyFields[table] ?? {})) {
      hiddenOf.get(table)?.set(name, {
        name,
        type,
        nullable: false,
        hasDefault: false,
        computed: true,
        selectedByDefault: false,
      });
    }
  }

  for (const [table, navigations] of Object.entries(linkTableNavigations)) {
    for (const [name, { target, localColumn, remoteColumn, through }] of Object.entries(navigations)) {
      const columns: [string, string][] = [
        [table, localColumn],
        [target, remoteColumn],
        [through.resource, through.localColumn],
        [through.resource, through.remoteColumn],
      ];
      for (const [owner, column] of columns) {
        if (!fieldsOf.get(owner)?.has(column))
          throw new Error(`model: navigation ${table}.${name} joins on unknown ${owner}.${column}`);
      }
      addNavigation(table, { name, target, cardinality: "many", localColumn, remoteColumn, through });
    }
  }

  for (const [table, names] of Object.entries(ownerOnlyFields)) {
    for (const name of names) {
      if (!fieldsOf.get(table)?.has(name))
        throw new Error(`model: owner-only field ${table}.${name} does not exist`);
    }
  }

  for (const [table, writability] of Object.entries(writableFields)) {
    for (const name of [...writability.create, ...writability.update, ...writability.required]) {
      if (!fieldsOf.get(table)?.has(name) && !hiddenOf.get(table)?.has(name)) {
        throw new Error(`model: writable field ${table}.${name} does not exist`);
      }
    }
  }

  const resources = new Map<string, Resource>();
  for (const model of exposed) {
    const table = tableOf.get(model.name) as string;
    const keys = [
      ["id"],
      ...model.fields.filter((field) => field.isUnique).map((field) => [field.name]),
      ...model.uniqueFields,
    ].filter((key) => key.every((name) => fieldsOf.get(table)?.has(name)));
    for (const name of [table, ...(resourceAliases[table] ?? [])]) {
      resources.set(name, {
        name,
        table,
        fields: fieldsOf.get(table) as Map<string, Field>,
        hiddenFields: hiddenOf.get(table) as Map<string, Field>,
        navigations: navigationsOf.get(table) as Map<string, Navigation>,
        keys,
        writability: writableFields[table] ?? { create: [], update: [], required: [], deletable: false },
      });
    }
  }
  return { resources };
}
