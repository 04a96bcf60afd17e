// PostGraphile 5 on fleetgate's bench database, a peer for `npm run bench -- --peers`.
// Runs on the Node 22 of this folder's own node_modules (PostGraphile 5 needs Node ≥ 22), from the
// copy bench/peers/install.ts installs; it never loads fleetgate's code.
// Env: DATABASE_URL, PORT, HOST, POOL_SIZE; PRINT_SCHEMA=1 prints the generated schema and exits.

import { createServer } from "node:http";
import { printSchema } from "graphql";
import { postgraphile } from "postgraphile";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { jsonPgSmartTags } from "postgraphile/utils";

// PostGraphile reads uniqueness from constraints only; fleetgate's device.uuid is a unique index.
const uniqueUuid = jsonPgSmartTags({
  version: 1,
  config: { class: { device: { tags: { unique: "uuid" } } } },
});

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [uniqueUuid],
  // The workloads filter on is_online and order by device_name, which have no index of their own
  // (the (fk, id) index serves the fleet): allow conditions and ordering on every column, as
  // PostGraphile 4 did by default.
  disablePlugins: ["PgIndexBehaviorsPlugin"],
  pgServices: [
    makePgService({
      connectionString: process.env.DATABASE_URL,
      schemas: ["public"],
      poolConfig: { max: Number(process.env.POOL_SIZE || 4) },
    }),
  ],
  // As a production deployment runs it: no schema watching, no GraphiQL, no explain.
  grafserv: { watch: false, graphiql: false, graphqlPath: "/graphql" },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);

if (process.env.PRINT_SCHEMA) {
  process.stdout.write(`${printSchema(await pgl.getSchema())}\n`);
  await pgl.release();
  process.exit(0);
}

const serv = pgl.createServ(grafserv);
// Build the schema before listening, so the first /ping means "ready", as fleetgate's does.
await pgl.getSchema();
const handle = serv.createHandler();
const server = createServer((request, response) => {
  if (request.url === "/ping") {
    response.writeHead(200, { "content-type": "text/plain" });
    response.end("OK");
    return;
  }
  handle(request, response, () => {
    response.writeHead(404, { "content-type": "text/plain" });
    response.end("Not found");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), process.env.HOST || "127.0.0.1");
