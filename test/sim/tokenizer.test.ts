import { describe, expect, it } from "vitest";
import { chatToPrompt, countTokens, tokenize } from "../../host-test/sim/tokenizer.js";

describe("word-level tokenizer", () => {
  it("counts whitespace-separated words, punctuation attached", () => {
    expect(tokenize("  Hello, world!\n\tHow are\tyou? ")).toEqual(["Hello,", "world!", "How", "are", "you?"]);
    expect(countTokens("")).toBe(0);
    expect(countTokens("one two  three")).toBe(3);
  });

  it("renders chat with role markers and a generation prompt", () => {
    const prompt = chatToPrompt([
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "there" }] },
    ]);
    expect(tokenize(prompt)).toEqual(["<|system|>", "be", "brief", "<|end|>", "<|user|>", "hi", "there", "<|end|>", "<|assistant|>"]);
  });

  it("makes turn N's prompt plus its reply a literal token prefix of turn N+1's prompt", () => {
    const turn1 = [{ role: "system", content: "shared system prompt" }, { role: "user", content: "first question" }];
    const reply = "tok1 tok2 tok3";
    const prompt1 = tokenize(chatToPrompt(turn1));
    const prompt2 = tokenize(chatToPrompt([...turn1, { role: "assistant", content: reply }, { role: "user", content: "second" }]));
    const sequence1 = [...prompt1, ...tokenize(reply)];
    expect(prompt2.slice(0, sequence1.length)).toEqual(sequence1);
    expect(prompt2.length).toBeGreaterThan(sequence1.length);
  });
});
