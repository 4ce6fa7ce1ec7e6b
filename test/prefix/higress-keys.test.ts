// The plugin's prefix keys (AssemblyScript, compiled here into a test-only wasm) equal an
// independent TypeScript computation of Higress's keys (test/helpers/higress-prefix-keys.ts),
// conversation by conversation, including the edge cases where Higress skips balancing.
import { beforeAll, describe, expect, it } from "vitest";
import asc from "assemblyscript/asc";
import { gjsonUnescape, higressBlockTexts, higressPrefixKeys, higressPrefixKeysFromText, goFormatFloatF, sha1HexUpper } from "../helpers/higress-prefix-keys.js";

interface KeyEntry {
  memory: WebAssembly.Memory;
  inputBuffer(len: number): number;
  levelKeys(compat: number, orderSensitive: number, chunkBytes: number, maxBlocks: number, maxHashBytes: number): number;
}

let wasm: KeyEntry;

async function compileEntry(): Promise<KeyEntry> {
  let binary: Uint8Array | null = null;
  const { error, stderr } = await asc.main([
    "assembly/__tests__/prefix_keys_entry.ts", "--runtime", "stub", "--exportRuntime", "-O2", "--outFile", "entry.wasm",
    "--config", "scripts/asconfig-standalone.json", // not the plugin's asconfig.json (asc reads it by default)
  ], {
    writeFile(name: string, contents: Uint8Array | string) {
      if (name.endsWith(".wasm") && typeof contents !== "string") binary = contents;
    },
  });
  if (error) throw new Error(`asc failed: ${error.message}\n${stderr.toString()}`);
  if (binary === null) throw new Error("asc wrote no wasm");
  const module = await WebAssembly.compile(binary);
  const env: Record<string, () => void> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === "env" && imp.name === "abort") env.abort = () => { throw new Error("wasm abort"); };
    else if (imp.kind === "function") throw new Error(`unexpected import ${imp.module}.${imp.name}`);
  }
  const instance = await WebAssembly.instantiate(module, { env });
  return instance.exports as unknown as KeyEntry;
}

interface RunOptions { orderSensitive?: boolean; compat?: boolean; chunkBytes?: number; maxBlocks?: number; maxHashBytes?: number }

/** The plugin's level keys for a body text (compat mode unless told otherwise: bare Higress keys). */
function pluginKeys(bodyText: string, o: RunOptions = {}): string[] {
  const bytes = Buffer.from(bodyText, "utf8");
  const ptr = wasm.inputBuffer(bytes.length);
  new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
  const compat = o.compat ?? !o.orderSensitive;
  const out = wasm.levelKeys(compat ? 1 : 0, o.orderSensitive ? 1 : 0, o.chunkBytes ?? 1024, o.maxBlocks ?? 1024, o.maxHashBytes ?? 1 << 30);
  const byteLength = new Uint32Array(wasm.memory.buffer, out - 4, 1)[0];
  const text = Buffer.from(wasm.memory.buffer, out, byteLength).toString("utf16le");
  if (text.startsWith("!")) throw new Error(text);
  return text === "" ? [] : text.split("\n");
}

type Msg = Record<string, unknown>;
const u = (content: unknown): Msg => ({ role: "user", content });
const a = (content: unknown): Msg => ({ role: "assistant", content });
const sys = (content: unknown): Msg => ({ role: "system", content });

const CONVERSATIONS: Array<[string, unknown]> = [
  ["single user", [u("hello")]],
  ["system + user", [sys("You are helpful."), u("Hi")]],
  ["multi-turn", [sys("S"), u("Q1"), a("A1"), u("Q2"), a("A2"), u("Q3")]],
  ["ends with assistant", [u("Q1"), a("A1")]],
  ["system only", [sys("just a system prompt")]],
  ["assistant first", [a("Welcome!"), u("thanks"), a("np")]],
  ["tool calls with null content", [u("weather?"), { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "c1", content: "sunny" }, u("and tomorrow?")]],
  ["multimodal array content", [u([{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }])]],
  ["unicode, escapes, emoji", [u("héllo \"quoted\" \\ back\nslash\t\u2028 😀 中文"), a("ok")]],
  ["lone surrogate", [u("bad \ud800 half")]],
  ["numbers, booleans, objects", [u(42), u(-7), u(1.5), u(1e21), u(0.000001), u(true), u(false), u({ k: [1, { z: null }] })]],
  ["non-string role", [{ role: 7, content: "x" }, { role: ["user"], content: "y" }]],
  ["role case matters", [{ role: "User", content: "x" }, u("y")]],
  ["identical turns", [u("again"), a("same"), u("again"), a("same"), u("again")]],
  ["empty strings", [u(""), a(""), u("")]],
  ["long conversation", Array.from({ length: 41 }, (_, i) => (i % 2 === 0 ? u(`question ${i} `.repeat(i + 1)) : a(`answer ${i}`)))],
  ["128 KB message", [sys("x".repeat(128 * 1024)), u("summarise")]],
];

beforeAll(async () => {
  wasm = await compileEntry();
}, 60_000);

describe("plugin keys == independent Higress computation", () => {
  for (const [name, messages] of CONVERSATIONS) {
    it(name, () => {
      const body = { model: "m", messages };
      const expected = higressPrefixKeys(JSON.parse(JSON.stringify(body)));
      expect(expected).not.toBeNull();
      expect(expected!.length).toBeGreaterThan(0);
      expect(pluginKeys(JSON.stringify(body))).toEqual(expected);
    });
  }

  it("a single message object (not an array) is one message, as gjson reads it", () => {
    const body = { messages: u("solo") };
    expect(pluginKeys(JSON.stringify(body))).toEqual(higressPrefixKeys(body));
    expect(pluginKeys(JSON.stringify(body))).toEqual([sha1HexUpper("user:solo")]);
  });

  it("bodies Higress skips (missing role/content, non-object message, no messages) give no keys", () => {
    for (const body of [
      { messages: [u("ok"), { role: "assistant" }] },
      { messages: [{ content: "no role" }] },
      { messages: ["text"] },
      { messages: [] },
      { messages: null },
      { model: "m" },
    ]) {
      const expected = higressPrefixKeys(body) ?? [];
      expect(pluginKeys(JSON.stringify(body))).toEqual(expected);
      expect(expected).toEqual([]);
    }
  });

  it("the salted (orderSensitive) keys match the reference's position-salted computation", () => {
    const body = { messages: [sys("S"), u("A"), a("x"), u("B"), u("A")] };
    // Salted keys are never compat keys: they carry the namespace (pool "NS", no model here).
    const salted = pluginKeys(JSON.stringify(body), { orderSensitive: true });
    expect(salted).toEqual(higressPrefixKeys(body, true)!.map((k) => "NS:p::" + k));
    expect(salted).not.toEqual(higressPrefixKeys(body)!.map((k) => "NS:p::" + k));
  });

  it("the level cap (outside compat) keeps the first levels unchanged (a capped path is a prefix of Higress's)", () => {
    const body = { messages: Array.from({ length: 10 }, (_, i) => u(`turn ${i}`)) };
    const full = higressPrefixKeys(body)!;
    const capped = pluginKeys(JSON.stringify(body), { compat: false, maxBlocks: 4 }).map((k) => k.replace(/^NS:p::/, ""));
    expect(capped).toEqual(full.slice(0, 4));
  });
});

// compat: true on the inputs where it used to differ (issue 12): golden keys from the raw-text
// reference (gjson decoding, `messages` only, no level cap), whatever the plugin's caps say.
const turns = (n: number) => JSON.stringify({ model: "m", messages: Array.from({ length: n }, (_, i) => (i % 3 === 2 ? a(`a${i}`) : u(`q${i}`))) });
const RAW_BODIES: Array<[string, string, number]> = [
  ["65 user turns (one past the old cap)", JSON.stringify({ messages: Array.from({ length: 65 }, (_, i) => u(`t${i}`)) }), 65],
  ["300 turns, user and assistant (the last one closes its own block)", turns(300), 201],
  ["1,000 user turns", JSON.stringify({ messages: Array.from({ length: 1000 }, (_, i) => u(`${i}`)) }), 1000],
  ["completions body: no keys", JSON.stringify({ model: "m", prompt: "Once upon a time" }), 0],
  ["completions token ids: no keys", JSON.stringify({ model: "m", prompt: [[1, 2, 3], [4]] }), 0],
  ["Responses body: no keys", JSON.stringify({ model: "m", instructions: "be brief", input: [u("hi"), { type: "function_call_output", call_id: "c", output: "42" }] }), 0],
  ["Responses string input: no keys", JSON.stringify({ model: "m", input: "hello" }), 0],
  ["messages win over prompt and input", JSON.stringify({ prompt: "p", input: "i", messages: [u("A")] }), 1],
  ["high surrogate + non-low \\u: one U+FFFD, the A is swallowed", String.raw`{"messages":[{"role":"user","content":"x\ud83d\u0041y"}]}`, 1],
  ["low surrogate first swallows the next \\u", String.raw`{"messages":[{"role":"user","content":"\udc00\ud83d\ude00"}]}`, 1],
  ["high + high, then a lone low", String.raw`{"messages":[{"role":"user","content":"\ud83d\ud83d\ude00!"}]}`, 1],
  ["valid pair and the last plane", String.raw`{"messages":[{"role":"user","content":"\ud83d\ude00 \udbff\udfff"}]}`, 1],
  ["surrogate before a simple escape or the end", String.raw`{"messages":[{"role":"user","content":"\ud800\n"},{"role":"user","content":"z\udbff"}]}`, 2],
  ["escaped role \\u0075ser closes a block", String.raw`{"messages":[{"role":"\u0075ser","content":"A"},{"role":"assistant","content":"B"}]}`, 2],
];

describe("compat: true is byte-exact on the less common inputs (raw-text reference)", () => {
  for (const [name, text, levels] of RAW_BODIES) {
    it(name, () => {
      const expected = higressPrefixKeysFromText(text);
      expect(expected).not.toBeNull();
      expect(expected!.length).toBe(levels);
      // The caps a non-compat config would apply (64 levels, 1 KiB) do not apply in compat mode;
      // prefix.lua's own does (256 levels: deeper user turns are not written; Higress has no cap).
      expect(pluginKeys(text, { maxBlocks: 64, maxHashBytes: 1024 })).toEqual(expected!.slice(0, 256));
    });
  }

  it("the reference decodes as gjson does (not as JSON.parse or encoding/json)", () => {
    expect(gjsonUnescape(String.raw`\ud83d\u0041`).toString("hex")).toBe("efbfbd");
    expect(gjsonUnescape(String.raw`\ud83d\ude00`).toString("utf8")).toBe("\u{1F600}");
    expect(gjsonUnescape(String.raw`\ud83dA`).toString("hex")).toBe("efbfbd41");
    expect(gjsonUnescape("\u00e9\\n").toString("utf8")).toBe("\u00e9\n");
  });
});

describe("reference self-checks", () => {
  it("blocks close after user messages and at the end", () => {
    expect(higressBlockTexts({ messages: [sys("S"), u("U"), a("A")] })).toEqual(["system:Suser:U", "assistant:A"]);
  });

  it("formats floats like Go's 'f', -1", () => {
    expect([1.5, 100, 1e21, 1.5e-7, -2.25, -0].map(goFormatFloatF)).toEqual(["1.5", "100", "1000000000000000000000", "0.00000015", "-2.25", "-0"]);
  });
});
