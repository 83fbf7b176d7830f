import { defineConfig } from "vitest/config";

// Unit tests share their worker's loaded modules (no isolation): most of their time was importing
// `src/` again for every file (on the 2-core machine, 74 files took 226 s isolated, 79 s shared).
// They keep no module state that leaks between files, and use no module mocks. Scenario tests,
// adapters against fake platforms, the gateway edge and browser tests stay isolated.
const SHARED = [
  "test/agents",
  "test/commands",
  "test/config",
  "test/delivery",
  "test/routing",
  "test/sessions",
  "test/inbound",
  "test/hooks",
  "test/state",
  "test/cli",
  "test/import",
  "test/tools",
].map((dir) => `${dir}/**/*.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The run's PostgreSQL, started by the first test that needs one (test/support/postgres.ts).
    globalSetup: ["test/support/postgres-global-setup.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: SHARED, isolate: false } },
      { extends: true, test: { name: "isolated", include: ["test/**/*.test.ts"], exclude: SHARED } },
    ],
  },
});
