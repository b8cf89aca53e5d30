import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The reliability suite has its own config and command (`npm run test:reliability`).
    exclude: ["test/reliability/**", "**/node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests spawn real processes and servers; two cores is the CI machine.
    pool: "forks",
    reporters: ["default"],
  },
});
