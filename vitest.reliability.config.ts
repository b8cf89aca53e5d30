import { defineConfig } from "vitest/config";

/**
 * The reliability and security suite (`npm run test:reliability`): provider faults, crash
 * consistency, MCP faults, bad input, security and load. Slow by design, so it lives apart from
 * the main suite. Forks, because the load test measures its own process' RSS and needs `gc()`.
 */
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores shared in CI: one file at a time keeps the load and crash figures meaningful.
    fileParallelism: false,
    execArgv: ["--expose-gc"],
    reporters: ["default"],
  },
});
