// Bundles the browser console (console/src/, Preact + urql + graphql-ws + Chart.js) with esbuild into
// node_modules/.cache/fleetgate-console/: index.html, and under assets/ the script and stylesheet
// named by the hash of their content (so the server may let browsers keep them for a year), each
// beside its brotli and gzip forms, compressed once here at their best instead of on every request.
// Run by `npm run generate` (the postinstall) and `npm run build:console`; nothing is fetched from
// any other host, at build or at run time. Prints the first load's compressed size.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const started = performance.now();
const root = fileURLToPath(new URL("../", import.meta.url));
const consoleDir = `${root}node_modules/.cache/fleetgate-console`;
const outdir = `${consoleDir}.${process.pid}-${randomBytes(4).toString("hex")}`;

const html = (script, style) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>fleetgate console</title>
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<noscript>The fleetgate console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;

try {
  await mkdir(`${outdir}/assets`, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { console: "console/src/main.tsx" },
    outdir: `${outdir}/assets`,
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: ["chrome110", "firefox110", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    define: { "process.env.NODE_ENV": '"production"' },
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    tsconfig: "console/tsconfig.json",
  });
  const files = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = files.find((file) => file.endsWith(".js"));
  const style = files.find((file) => file.endsWith(".css"));
  if (!script || !style) throw new Error(`console build: no script or stylesheet in ${files.join(", ")}`);
  await writeFile(`${outdir}/index.html`, html(script, style));
  let firstLoad = 0;
  for (const file of await readdir(`${outdir}/assets`)) {
    const body = await readFile(`${outdir}/assets/${file}`);
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
    await writeFile(`${outdir}/assets/${file}.br`, br);
    await writeFile(`${outdir}/assets/${file}.gz`, gzipSync(body, { level: 9 }));
    if (file.endsWith(".js")) firstLoad += gzipSync(body, { level: 9 }).length;
  }
  await writeFile(
    `${outdir}/build.json`,
    `${JSON.stringify({ script, style, firstLoadGzipBytes: firstLoad })}\n`,
  );
  const old = `${consoleDir}.old-${process.pid}`;
  await rename(consoleDir, old).catch(() => {});
  await rename(outdir, consoleDir);
  await rm(old, { recursive: true, force: true });
  process.stdout.write(
    `Built the console to ${relative(root, consoleDir)} in ${Math.round(performance.now() - started)} ms ` +
      `(first-load JavaScript ${(firstLoad / 1024).toFixed(1)} KiB gzip)\n`,
  );
} catch (error) {
  await rm(outdir, { recursive: true, force: true });
  throw error;
}
