// The shape every workload generator produces: a seeded, repeatable list of sessions. A session
// is one user conversation (or one single-turn request); its turns run in order, each turn's
// prompt = the previous prompt + the previous reply + the new question (multi-turn chat), or
// system prompt + question for single-turn sessions. Lengths are simulator tokens (words).
// Pure data, never fails.
import type { ChatMessage } from "../../host-test/sim/tokenizer.js";

export interface Turn {
  /** The user message of this turn. */
  question: string;
  /** max_tokens sent with ignore_eos, so the output is exactly this long. */
  outputTokens: number;
}

export interface Session {
  id: string;
  /** Prefix group (shared system prompt), -1 when nothing is shared on purpose. */
  group: number;
  /** Shared system prompt of the group, null for none. */
  systemPrompt: string | null;
  turns: Turn[];
  /** Request class for per-class breakdowns (e.g. Galileo's "500" / "1k" / "8k"). */
  tag?: string;
  /** Single-turn sessions given as ready chat messages (trace replay), built when sent. */
  messages?: () => ChatMessage[];
  /** Their simulator tokens (what the pod's chat template + tokenizer make of them), when cheaper to build directly. */
  promptTokens?: () => string[];
}

export interface Workload {
  name: string;
  sessions: Session[];
  /**
   * When a follow-up turn is sent: "immediate" = before any other session's next turn (a user
   * answering at once, one session per closed-loop worker); "queued" = behind every session
   * already waiting (inference-perf's round robin over users).
   */
  followUps: "immediate" | "queued";
}

export function totalTurns(workload: Workload): number {
  return workload.sessions.reduce((sum, s) => sum + s.turns.length, 0);
}
