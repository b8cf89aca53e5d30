import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Tests spawn real processes and servers; two cores is the CI machine.
    pool: "forks",
    reporters: ["default"],
  },
});
