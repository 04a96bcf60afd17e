// Writes src/generated/datamodel.json: the DMMF datamodel of prisma/schema.prisma. The model
// registry (src/model) reads it at start. The Prisma client's own copy omits nullability and
// foreign keys, which the registry needs.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import internals from "@prisma/internals";

const dmmf = await internals.getDMMF({ datamodel: readFileSync("prisma/schema.prisma", "utf8") });
mkdirSync("src/generated", { recursive: true });
writeFileSync("src/generated/datamodel.json", `${JSON.stringify(dmmf.datamodel, null, 1)}\n`);
