// Mooncake trace replay (bench/trace/mooncake.ts): parsing with named errors, deterministic text
// per block id (shared ids -> shared prompt prefix, for the engines and the plugin alike), exact
// token counts, and time compression.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { chatToPrompt, tokenize } from "../../host-test/sim/tokenizer.js";
import { BlockText, parseMooncakeTrace, readTraceFile, traceMessages, traceReplay, traceTokens } from "../../bench/trace/mooncake.js";
import { DEFAULT_TRACE } from "../../bench/scenarios/trace.js";

const line = (o: object) => JSON.stringify(o);
const FAST25_SHA256 = "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131";
const TRACE = [
  line({ timestamp: 0, input_length: 1100, output_length: 5, hash_ids: [0, 1, 2] }),
  "",
  line({ timestamp: 40, input_length: 1030, output_length: 3, hash_ids: [0, 1, 7] }),
  line({ timestamp: 100, input_length: 300, output_length: 9, hash_ids: [9] }),
].join("\n");

describe("parseMooncakeTrace", () => {
  it("reads timestamp, lengths and block ids, skipping blank lines", () => {
    const t = parseMooncakeTrace(TRACE);
    expect(t).toHaveLength(3);
    expect(t[1]).toEqual({ timestampMs: 40, inputLength: 1030, outputLength: 3, hashIds: [0, 1, 7] });
  });

  it("names the line of a malformed request", () => {
    expect(() => parseMooncakeTrace(`${TRACE}\n{"timestamp": 1}`)).toThrow(/line 5: input_length/);
    expect(() => parseMooncakeTrace("nope")).toThrow(/line 1: not JSON/);
    expect(() => parseMooncakeTrace(line({ timestamp: 0, input_length: 1100, output_length: 1, hash_ids: [0, 1] }))).toThrow(/2 hash_ids for 1100 tokens/);
    expect(() => parseMooncakeTrace(`${line({ timestamp: 5, input_length: 1, output_length: 1, hash_ids: [0] })}\n${line({ timestamp: 4, input_length: 1, output_length: 1, hash_ids: [1] })}`)).toThrow(/line 2: timestamps must not decrease/);
  });

  // The vendored copy (bench/trace/data/README.md) is the FAST'25 file unchanged: its digest.
  it("parses the vendored FAST'25 synthetic trace, unchanged: one request per line", () => {
    const text = readTraceFile(DEFAULT_TRACE);
    expect(createHash("sha256").update(text).digest("hex")).toBe(FAST25_SHA256);
    const t = parseMooncakeTrace(text);
    expect(t.length).toBe(text.split("\n").filter((l) => l.trim().length > 0).length);
    expect(t.length).toBe(3993);
  });

  it("reads a plain trace file and a gzipped one alike", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "trace-"));
    fs.writeFileSync(path.join(dir, "t.jsonl"), TRACE);
    fs.writeFileSync(path.join(dir, "t.jsonl.gz"), gzipSync(TRACE));
    expect(readTraceFile(path.join(dir, "t.jsonl.gz"))).toBe(TRACE);
    expect(readTraceFile(path.join(dir, "t.jsonl"))).toBe(TRACE);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("trace prompts", () => {
  const [a, b, c] = parseMooncakeTrace(TRACE);

  it("gives a block id the same words in every request, and input_length tokens in all", () => {
    const text = new BlockText(1);
    const ta = tokenize(chatToPrompt(traceMessages(a, text)));
    const tb = tokenize(chatToPrompt(traceMessages(b, text)));
    expect(ta.length).toBe(1100 + 1); // + the generation marker
    expect(tb.length).toBe(1030 + 1);
    let shared = 0;
    while (ta[shared] === tb[shared]) shared++;
    expect(shared).toBe(2 * 512 + 1); // blocks 0 and 1, then the third message marker; block 2 vs 7 differ from its first word
    expect(traceMessages(a, text).slice(0, 2)).toEqual(traceMessages(b, text).slice(0, 2)); // the plugin's levels match too
    expect(tokenize(chatToPrompt(traceMessages(c, new BlockText(2))))).not.toEqual(tokenize(chatToPrompt(traceMessages(c, text))));
  });

  it("builds the same tokens directly as the pod's template and tokenizer make of the messages", () => {
    const text = new BlockText(3);
    for (const r of [a, b, c]) expect(traceTokens(r, text)).toEqual(tokenize(chatToPrompt(traceMessages(r, text))));
  });

  it("replays in trace order at the trace's times divided by the speed", () => {
    const r = traceReplay(parseMooncakeTrace(TRACE), { speed: 2, seed: 1 });
    expect(r.timesMs).toEqual([0, 20, 50]);
    expect(r.workload.sessions.map((s) => s.turns[0].outputTokens)).toEqual([5, 3, 9]);
    expect(traceReplay(parseMooncakeTrace(TRACE), { speed: 1, seed: 1, maxRequests: 2 }).timesMs).toEqual([0, 40]);
    expect(() => traceReplay([], { speed: 0, seed: 1 })).toThrow(/speed/);
  });
});
