// `npm run schema`: writes schema.graphql, the GraphQL schema generated from the model registry,
// for clients and code generators; a test fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { printSchema } from "graphql";
import { schemaOf } from "../src/graphql/schema/build-schema.ts";
import { buildModel } from "../src/model/registry.ts";

const file = new URL("../schema.graphql", import.meta.url);
writeFileSync(file, `${printSchema(schemaOf(buildModel()))}\n`);
process.stdout.write(`wrote ${file.pathname}\n`);
