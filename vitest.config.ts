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
  },
});
