import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  // graphql 16 ships CommonJS (`main`) and ESM (`module`) builds. Node loads the CommonJS one for
  // every package; Vite would hand our sources the ESM one, and two copies of graphql refuse each
  // other's types. Resolve it as Node does.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }] },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only adds contention with the databases they drive.
    maxWorkers: 2,
    // Test files share their worker's module cache instead of a fresh one each: every file would
    // otherwise import the server again and compile PGlite's WebAssembly again (about a second a
    // file, and slower tests until the JIT warms up). Measured on 2026-11-27: the whole suite in
    // 12.0 min instead of 16.3. Files keep no state in modules: each starts its own servers and
    // databases, and one that stubs a global restores it.
    isolate: false,
  },
});
