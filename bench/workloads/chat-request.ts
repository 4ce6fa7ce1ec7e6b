// The OpenAI request a benchmark turn sends, and the conversation it grows. Benchmarks ask for
// exact output lengths (`ignore_eos` + `max_tokens`) and the usage chunk (cached_tokens).
// Inputs: the session, the turns done so far with their replies. Never fails.
import type { ChatMessage } from "../../host-test/sim/tokenizer.js";
import type { Session } from "./types.js";

export interface ChatCompletionBody {
  model?: string;
  messages: ChatMessage[];
  max_tokens: number;
  ignore_eos: true;
  stream: true;
  stream_options: { include_usage: true };
}

/** Messages of turn `turnIndex`: system prompt, every earlier question and reply, the new question. */
export function conversationMessages(session: Session, turnIndex: number, replies: readonly string[]): ChatMessage[] {
  if (session.messages && turnIndex === 0) return session.messages();
  const messages: ChatMessage[] = [];
  if (session.systemPrompt !== null) messages.push({ role: "system", content: session.systemPrompt });
  for (let t = 0; t < turnIndex; t++) {
    messages.push({ role: "user", content: session.turns[t].question });
    messages.push({ role: "assistant", content: replies[t] ?? "" });
  }
  messages.push({ role: "user", content: session.turns[turnIndex].question });
  return messages;
}

export function chatCompletionBody(messages: ChatMessage[], maxTokens: number, model?: string): ChatCompletionBody {
  return {
    ...(model === undefined ? {} : { model }),
    messages,
    max_tokens: maxTokens,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
  };
}
