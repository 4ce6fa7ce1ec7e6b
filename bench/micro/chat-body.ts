// The benches' chat request bodies (no compiler import: costs.ts loads asc, which reads argv).
/** A multi-turn chat body of about `bytes` bytes: a system prompt, then user/assistant turns. */
export function chatBody(bytes: number): Uint8Array {
  const words = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919 + seed) % 10007}`).join(" ");
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: words(60, 1) }];
  let turn = 0;
  while (JSON.stringify({ model: "m", messages }).length < bytes) {
    messages.push({ role: turn % 2 === 0 ? "user" : "assistant", content: words(40, turn + 2) });
    turn++;
  }
  if (messages[messages.length - 1].role !== "user") messages.push({ role: "user", content: "next?" });
  return Buffer.from(JSON.stringify({ model: "m", messages, max_tokens: 256, stream: true }));
}

/** `body` with a line break (a JSON escape, as real prompts hold) before every word starting "w5". */
export function withLineBreaks(body: Uint8Array): Buffer {
  return Buffer.from(Buffer.from(body).toString("utf8").replaceAll(" w5", "\\nw5"));
}
