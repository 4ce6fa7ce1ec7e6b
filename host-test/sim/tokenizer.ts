// Deterministic word-level tokenizer shared by the simulator and the workload generator.
// One whitespace-separated word = one token (punctuation stays attached), so a client can count
// tokens exactly without a model vocabulary. chatToPrompt renders chat messages with a fixed
// template whose rendering of turn N is a literal prefix of turn N+1's (the generation prompt
// `<|assistant|>` is followed by the reply words), so prefix caching works across turns.
// Never fails: non-string content renders as its text parts, or as nothing.

export interface ChatMessage {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}

export const ASSISTANT_MARKER = "<|assistant|>";
export const END_MARKER = "<|end|>";

export function tokenize(text: string): string[] {
  return text.split(/\s+/).filter((word) => word.length > 0);
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

function contentText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part && typeof part.text === "string" ? part.text : "")).join(" ");
}

/**
 * `<|role|>\ncontent\n<|end|>\n` per message, then the generation prompt `<|assistant|>\n`.
 * The reply generated after it, re-sent as an assistant message, renders as
 * `<|assistant|>\nreply\n<|end|>\n`: the token sequence prompt+reply is a prefix of the next prompt.
 */
export function chatToPrompt(messages: ChatMessage[]): string {
  let out = "";
  for (const message of messages) {
    const body = contentText(message.content);
    out += `<|${message.role}|>\n${body}${body.length > 0 ? "\n" : ""}${END_MARKER}\n`;
  }
  return out + `${ASSISTANT_MARKER}\n`;
}
