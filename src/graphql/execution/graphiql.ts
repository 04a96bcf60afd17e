import type { FastifyInstance } from "fastify";
import type { GraphiQLOptions } from "graphql-yoga";

// GraphiQL, served from the project's own dependencies: yoga's default page loads its scripts
// from a public CDN, which leaves a blank page on a machine without internet (factory and edge
// networks). @graphql-yoga/render-graphiql ships the same build (scripts, stylesheet, editor
// workers) as strings; the page links them from /graphql/assets/, so it stays small and a browser
// caches what it loads.

export const GRAPHIQL_ASSETS = "/graphql/assets";

const defaultQuery = `# fleetgate's GraphQL: the same data, permissions and rules as the OData API.
#
# Without a credential a query reads what a guest may: public fleets and their public releases,
# and the device-type catalogue. Mutations, supervisor commands and everything else need one:
# open "Headers" (below the editor) and write
#   {"Authorization": "Bearer <token>"}
# where <token> is a session token (POST /login_ {"username": "…", "password": "…"} answers one)
# or an API key. The schema (Docs, top left) is readable either way.
#
# Run the query with Ctrl-Enter.
{
  applications(first: 10, orderBy: [{ appName: ASC }]) {
    id
    appName
    slug
    ownsDeviceCount
    ownsDevice(first: 5, orderBy: [{ deviceName: ASC }]) {
      deviceName
      isOnline
      overallStatus
    }
  }
}
`;

export const graphiqlOptions: GraphiQLOptions = {
  title: "fleetgate GraphiQL",
  defaultQuery,
};

type Build = typeof import("@graphql-yoga/render-graphiql/graphiql");

const assets: Record<string, { type: string; body: (build: Build) => string | Buffer }> = {
  "graphiql.css": { type: "text/css; charset=utf-8", body: (build) => build.css },
  "graphiql.js": { type: "text/javascript; charset=utf-8", body: (build) => build.js },
  "editor.worker.js": { type: "text/javascript; charset=utf-8", body: (build) => build.editorWorkerService },
  "json.worker.js": { type: "text/javascript; charset=utf-8", body: (build) => build.jsonWorker },
  "graphql.worker.js": { type: "text/javascript; charset=utf-8", body: (build) => build.graphqlWorker },
  "favicon.ico": {
    type: "image/x-icon",
    body: (build) => Buffer.from(build.favicon.slice(build.favicon.indexOf(",") + 1), "base64"),
  },
};

/** A value inside an inline script: `</script>` in it cannot end the script. */
const scriptValue = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c");

/** The page: yoga's GraphiQL, every script and stylesheet from this server. */
export function renderGraphiQL(options: GraphiQLOptions = {}): string {
  const title = (options.title ?? "fleetgate GraphiQL").replace(/[<&]/g, (c) =>
    c === "<" ? "&lt;" : "&amp;",
  );
  const workers = {
    editorWorkerService: `${GRAPHIQL_ASSETS}/editor.worker.js`,
    json: `${GRAPHIQL_ASSETS}/json.worker.js`,
    graphql: `${GRAPHIQL_ASSETS}/graphql.worker.js`,
  };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="${GRAPHIQL_ASSETS}/favicon.ico" />
    <link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root">Loading ${title}…</div>
    <script>
      const workers = ${scriptValue(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };
    </script>
    <script src="${GRAPHIQL_ASSETS}/graphiql.js"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector("#root"), ${scriptValue(options)});
    </script>
  </body>
</html>
`;
}

/** `GET /graphql/assets/<file>`: the GraphiQL build, loaded on its first request (it is 9 MB). */
export function graphiqlAssetRoutes(app: FastifyInstance): void {
  let build: Promise<Build> | undefined;
  app.get<{ Params: { file: string } }>(`${GRAPHIQL_ASSETS}/:file`, async (request, reply) => {
    const asset = Object.hasOwn(assets, request.params.file) ? assets[request.params.file] : undefined;
    if (!asset) return reply.code(404).send("");
    build ??= import("@graphql-yoga/render-graphiql/graphiql");
    return reply
      .type(asset.type)
      .header("cache-control", "public, max-age=86400")
      .send(asset.body(await build));
  });
}
