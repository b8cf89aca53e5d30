/**
 * What the store must hold after a cluster run, whatever was killed or cut on the way: every
 * user message once and in order per session, each followed by exactly one answer (its own), a
 * legal history (historyProblems, coreProblems), and no turn left open.
 */
import pg from "pg";
import { textOf } from "../../../src/core/message-helpers.js";
import type { Message } from "../../../src/core/messages.js";
import { PgSessionStore, historyProblems } from "../../../src/session/index.js";
import { TEST_PG_URL } from "./pg.js";
import { coreProblems } from "../legality.js";
import { answerFor } from "./echo-llm.js";
import { question, sessionId } from "./harness.js";

export interface StoreFigures {
  lost: number;
  duplicated: number;
  reordered: number;
  /** User messages without exactly one answer of their own. */
  unanswered: number;
  answeredTwice: number;
  openTurns: number;
  /** The first problems found, for the failure message. */
  problems: string[];
}

/** Problems of one session's stored history (empty when it is exactly right). */
export function sessionProblems(history: readonly Message[], expected: readonly string[]): { figures: Omit<StoreFigures, "openTurns" | "problems">; problems: string[] } {
  const problems: string[] = [];
  const figures = { lost: 0, duplicated: 0, reordered: 0, unanswered: 0, answeredTwice: 0 };
  const users = history.flatMap((m, i) => (m.role === "user" ? [{ text: textOf(m.content), i }] : []));
  const texts = users.map((u) => u.text);
  for (const q of expected) {
    const n = texts.filter((t) => t === q).length;
    if (n === 0) {
      figures.lost++;
      problems.push(`lost: ${q}`);
    } else if (n > 1) {
      figures.duplicated += n - 1;
      problems.push(`stored ${n} times: ${q}`);
    }
  }
  const unexpected = texts.filter((t) => !expected.includes(t));
  if (unexpected.length) problems.push(`unexpected user messages: ${unexpected.join(" | ")}`);
  const firsts = [...new Set(texts)].filter((t) => expected.includes(t));
  const inOrder = expected.filter((q) => firsts.includes(q));
  if (firsts.join("\n") !== inOrder.join("\n")) {
    figures.reordered++;
    problems.push(`out of order: ${firsts.join(" | ")}`);
  }
  users.forEach((u, k) => {
    const end = users[k + 1]?.i ?? history.length;
    const answers = history.slice(u.i + 1, end).filter((m) => m.role === "assistant" && textOf(m.content).trim() !== "");
    const own = answers.filter((m) => textOf(m.content) === answerFor(u.text)).length;
    if (own === 0) {
      figures.unanswered++;
      problems.push(`no answer to ${u.text} (got: ${answers.map((m) => textOf(m.content)).join(" | ") || "nothing"})`);
    } else if (own > 1 || answers.length > own) {
      figures.answeredTwice++;
      problems.push(`answered ${answers.length} times: ${u.text}`);
    }
  });
  for (const p of [...historyProblems(history), ...coreProblems(history)]) problems.push(`illegal history: ${p}`);
  return { figures, problems };
}

/** Checks every session of a run (`prefix`, S sessions of T turns) in the cluster's schema. */
export async function checkStore(schema: string, prefix: string, sessions: number, turns: number): Promise<StoreFigures> {
  const store = new PgSessionStore({ url: TEST_PG_URL, schema });
  const out: StoreFigures = { lost: 0, duplicated: 0, reordered: 0, unanswered: 0, answeredTwice: 0, openTurns: 0, problems: [] };
  try {
    for (let s = 0; s < sessions; s++) {
      const history = await store.loadMessages(`api:${sessionId(prefix, s)}`);
      const expected = Array.from({ length: turns }, (_, t) => question(prefix, s, t));
      const { figures, problems } = sessionProblems(history, expected);
      for (const [k, v] of Object.entries(figures)) out[k as keyof typeof figures] += v;
      out.problems.push(...problems.slice(0, 3).map((p) => `${sessionId(prefix, s)}: ${p}`));
    }
  } finally {
    await store.close();
  }
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number; sessions: string[] | null }>(
      `SELECT count(*)::int AS n, array_agg(DISTINCT session_key) AS sessions FROM ${schema}.turns WHERE status = 'pending'`,
    );
    out.openTurns = rows[0]!.n;
    if (out.openTurns) out.problems.push(`open turns in ${rows[0]!.sessions?.slice(0, 5).join(", ")}`);
  } finally {
    await client.end();
  }
  out.problems = out.problems.slice(0, 20);
  return out;
}
