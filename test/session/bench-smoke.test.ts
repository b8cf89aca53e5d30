import { describe, expect, it } from "vitest";
import { formatSessionBench, runSessionPersistenceBench } from "../../bench/session-persistence.js";

describe("session persistence benchmark", () => {
  it("runs at a tiny size and reports every figure", async () => {
    const rows = await runSessionPersistenceBench({ lengths: [10, 40], saveReps: 2, loadReps: 1 });
    expect(rows.map((r) => r.messages)).toEqual([10, 40]);
    for (const row of rows) {
      for (const value of [row.sqliteSaveTurnMs, row.sqliteLoadAllMs, row.sqliteLoadBudgetMs, row.jsonlSaveTurnMs, row.jsonlLoadMs]) {
        expect(Number.isFinite(value) && value >= 0).toBe(true);
      }
    }
    const table = formatSessionBench(rows);
    expect(table).toContain("sqlite save/turn");
    expect(table).toContain("sqlite save/turn ratio 40 vs 10:");
  });
});
