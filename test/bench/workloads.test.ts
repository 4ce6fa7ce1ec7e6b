// Workload generators: seeded and repeatable, and matching their parameters.
import { describe, expect, it } from "vitest";
import { SeededRandom } from "../../host-test/sim/random.js";
import { chatToPrompt, countTokens, tokenize } from "../../host-test/sim/tokenizer.js";
import { sampleLength } from "../../bench/workloads/lengths.js";
import { sharedPrefixWorkload, zipfCounts } from "../../bench/workloads/shared-prefix.js";
import { lowSharingWorkload, SHAREGPT_LIKE } from "../../bench/workloads/low-sharing.js";
import { galileoWorkload, higressWorkload, hotPrefixWorkload } from "../../bench/workloads/seeds.js";
import { manySystemPromptsShape, manySystemPromptsWorkload } from "../../bench/workloads/many-system-prompts.js";
import { repeatWorkload } from "../../bench/workloads/repeat.js";
import { chatCompletionBody, conversationMessages } from "../../bench/workloads/chat-request.js";
import { totalTurns } from "../../bench/workloads/types.js";

const PARAMS = { num_groups: 5, num_prompts_per_group: 4, system_prompt_len: 100, question_len: { mean: 30, std_dev: 9, min: 20, max: 40 }, output_len: 50 };

describe("shared_prefix generator", () => {
  it("is repeatable with a seed and changes with it", () => {
    expect(sharedPrefixWorkload("a", PARAMS, 7)).toEqual(sharedPrefixWorkload("a", PARAMS, 7));
    expect(sharedPrefixWorkload("a", PARAMS, 8)).not.toEqual(sharedPrefixWorkload("a", PARAMS, 7));
  });

  it("shares one system prompt per group, of the requested length, and nothing across groups", () => {
    const w = sharedPrefixWorkload("a", PARAMS, 1);
    expect(w.sessions).toHaveLength(20);
    const byGroup = new Map<number, Set<string>>();
    for (const s of w.sessions) {
      expect(countTokens(s.systemPrompt!)).toBe(100);
      byGroup.set(s.group, (byGroup.get(s.group) ?? new Set()).add(s.systemPrompt!));
    }
    expect([...byGroup.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    for (const prompts of byGroup.values()) expect(prompts.size).toBe(1);
    const firstWords = new Set([...byGroup.values()].map((p) => [...p][0].split(" ").slice(0, 4).join(" ")));
    expect(firstWords.size).toBe(5);
  });

  it("samples questions within the truncated normal window and fixed outputs", () => {
    const w = sharedPrefixWorkload("a", { ...PARAMS, num_prompts_per_group: 40 }, 3);
    const lengths = w.sessions.map((s) => countTokens(s.turns[0].question));
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(40);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    expect(mean).toBeGreaterThan(27);
    expect(mean).toBeLessThan(33);
    expect(new Set(w.sessions.map((s) => s.turns[0].outputTokens))).toEqual(new Set([50]));
  });

  it("gives multi-turn sessions their rounds, and per-group counts when given a list", () => {
    const w = sharedPrefixWorkload("m", { ...PARAMS, num_prompts_per_group: [1, 2, 3, 0, 4], enable_multi_turn_chat: true, turns_per_session: 3 }, 1);
    expect(w.sessions).toHaveLength(10);
    expect(totalTurns(w)).toBe(30);
    expect(w.sessions.filter((s) => s.group === 4)).toHaveLength(4);
  });

  it("refuses invalid parameters with the offending key", () => {
    expect(() => sharedPrefixWorkload("x", { ...PARAMS, num_groups: 0 }, 1)).toThrow(/num_groups/);
    expect(() => sharedPrefixWorkload("x", { ...PARAMS, num_prompts_per_group: [1, 2] }, 1)).toThrow(/2 entries for 5 groups/);
  });
});

describe("lengths", () => {
  it("keeps the log-normal mean and its clamp", () => {
    const rng = new SeededRandom(5);
    const spec = SHAREGPT_LIKE.input_len;
    const xs = Array.from({ length: 4000 }, () => sampleLength(spec, rng));
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean).toBeGreaterThan(140);
    expect(mean).toBeLessThan(180);
    expect(Math.max(...xs)).toBeLessThanOrEqual(1024);
  });
});

describe("seed and control shapes", () => {
  it("zipfCounts sums exactly and is skewed (equal with skew 0)", () => {
    const c = zipfCounts(4, 500, 1.5);
    expect(c.reduce((a, b) => a + b, 0)).toBe(500);
    expect(c[0]).toBeGreaterThan(c[1]);
    expect(c[1]).toBeGreaterThan(c[3]);
    expect(zipfCounts(5, 500, 0)).toEqual([100, 100, 100, 100, 100]);
    expect(hotPrefixWorkload(200, 1).sessions.filter((s) => s.group === 0).length).toBe(zipfCounts(4, 200, 1.5)[0]);
  });

  it("Galileo tags its three input classes with their scaled lengths", () => {
    const w = galileoWorkload(100, 1, 0.25, 64);
    const lengths = new Map<string, Set<number>>();
    for (const s of w.sessions) lengths.set(s.tag!, (lengths.get(s.tag!) ?? new Set()).add(countTokens(s.turns[0].question)));
    expect(Object.fromEntries([...lengths].map(([t, l]) => [t, [...l]]))).toEqual({ "500": [125], "1k": [250], "8k": [2000] });
    expect(w.sessions.filter((s) => s.tag === "8k")).toHaveLength(15);
  });

  it("Higress is 60 sessions x 5 rounds of 200 in / 800 out, no shared system prompt, follow-ups at once", () => {
    const w = higressWorkload(1);
    expect(w.sessions).toHaveLength(60);
    expect(totalTurns(w)).toBe(300);
    expect(w.followUps).toBe("immediate");
    expect(w.sessions.every((s) => s.systemPrompt === null && s.turns.every((t) => countTokens(t.question) === 200 && t.outputTokens === 800))).toBe(true);
  });

  it("the low-sharing control shares no prompt", () => {
    const w = lowSharingWorkload("l", { count: 50, ...SHAREGPT_LIKE }, 2);
    expect(new Set(w.sessions.map((s) => s.turns[0].question.split(" ").slice(0, 3).join(" "))).size).toBe(50);
    expect(w.sessions.every((s) => s.systemPrompt === null)).toBe(true);
  });

  it("many system prompts fills ~73% of the cluster's KV, ~6x one pod", () => {
    const shape = manySystemPromptsShape({ pods: 8, podKvTokens: 8192, capacityFraction: 0.73, lengthScale: 0.1 });
    expect(shape).toMatchObject({ systemTokens: 600, questionTokens: 120, outputTokens: 100 });
    expect(shape.clusterKvFraction).toBeGreaterThan(0.7);
    expect(shape.clusterKvFraction).toBeLessThan(0.76);
    expect(shape.podKvMultiple).toBeGreaterThan(5.5);
    expect(shape.podKvMultiple).toBeLessThan(6.1);
    const { workload } = manySystemPromptsWorkload({ pods: 8, podKvTokens: 8192 }, 1);
    const distinct = new Set(workload.sessions.map((s) => s.systemPrompt)).size * 600 + workload.sessions.length * 120;
    expect(distinct / (8 * 8192)).toBeCloseTo(shape.clusterKvFraction, 5);
  });

  it("repeatWorkload keeps every session per copy under fresh ids", () => {
    const base = sharedPrefixWorkload("a", PARAMS, 1);
    const w = repeatWorkload(base, 3, 1);
    expect(w.sessions).toHaveLength(60);
    expect(new Set(w.sessions.map((s) => s.id)).size).toBe(60);
  });
});

describe("chat requests", () => {
  it("grows the conversation so each prompt extends the previous prompt and reply", () => {
    const w = sharedPrefixWorkload("m", { ...PARAMS, enable_multi_turn_chat: true, turns_per_session: 3 }, 1);
    const s = w.sessions[0];
    const replies = ["tok1 tok2 tok3", "tok4 tok5"];
    const first = tokenize(chatToPrompt(conversationMessages(s, 0, replies)));
    const second = tokenize(chatToPrompt(conversationMessages(s, 1, replies)));
    const firstPlusReply = [...first, ...tokenize(replies[0])];
    expect(second.slice(0, firstPlusReply.length)).toEqual(firstPlusReply);
    expect(conversationMessages(s, 2, replies).map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
  });

  it("asks for exact, streamed output with usage", () => {
    expect(chatCompletionBody([{ role: "user", content: "hi" }], 7, "m")).toEqual({
      model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 7, ignore_eos: true, stream: true, stream_options: { include_usage: true },
    });
  });
});
