// pinejs 23, the engine balena's own API runs on, a peer for `npm run bench -- --peers`.
// Runs on the Node 22 of this folder's own node_modules, from the copy bench/peers/install.ts
// installs; it never loads fleetgate's code. fleet.sbvr is the smallest model that holds what the
// read workloads ask for (application, device and the relation between them), at apiRoot v6, so
// the bench's own OData requests reach it unchanged. pinejs makes its tables in DATABASE_URL (a
// scratch database of its own); bench/peers/pinejs.ts fills them once /ping answers.
// Env: DATABASE_URL, PORT, HOST, POOL_SIZE.

import { fileURLToPath } from "node:url";
import * as pine from "@balena/pinejs";
import express from "express";

pine.env.db.poolSize = Number(process.env.POOL_SIZE || 4);

/** @type {import("@balena/pinejs").ConfigLoader.Config} */
const config = {
  models: [
    {
      modelName: "fleet",
      apiRoot: "v6",
      modelFile: fileURLToPath(new URL("./fleet.sbvr", import.meta.url)),
      // As a production deployment runs it: no log line per request and per query.
      logging: { log: false, info: false, debug: false, warn: true, error: true },
    },
  ],
  // The bench reads as pinejs's guest, like PostGraphile without a credential: read on every
  // resource of the v6 model (not pinejs's own users and keys), no API key looked up per request.
  users: [{ username: "guest", password: " ", permissions: ["v6.read"] }],
};

const app = express();
app.disable("x-powered-by");
app.get("/ping", (_request, response) => {
  response.status(200).type("text/plain").send("OK");
});
app.use(express.json());

// Listen only once the models are executed, so the first /ping means "ready", as fleetgate's does.
await pine.init(app, config);
const server = app.listen(Number(process.env.PORT), process.env.HOST || "127.0.0.1");
server.keepAliveTimeout = 60_000;
