// Block boundaries and block text: Higress's chat rules (string / array / multimodal content,
// system-only, assistant-first, tool messages, missing role or content), completions prompts,
// Responses API input, the byte and level caps, and gjson's rendering of non-string values.
import { parseJsonString } from "../json/parse";
import { JsonValue } from "../json/value";
import { utf8DecodeLossy } from "../util/utf8";
import { BlockOptions, BlockScan, BlockSink, BlockSource, scanBlocks } from "../prefix/blocks";
import { goFormatFloat } from "../prefix/gjson_text";

// Collects each block's bytes as text, so tests read like the rules.
class TextCollector extends BlockSink {
  blocks: string[] = [];
  private current: u8[] = [];
  feed(data: Uint8Array, start: i32, end: i32): void {
    for (let i = start; i < end; i++) this.current.push(data[i]);
  }
  close(): void {
    const b = new Uint8Array(this.current.length);
    for (let i = 0; i < this.current.length; i++) b[i] = this.current[i];
    this.blocks.push(utf8DecodeLossy(b));
    this.current = [];
  }
  discard(): void { this.current = []; }
}

let lastScan: BlockScan = new BlockScan();

function body(json: string): JsonValue {
  const r = parseJsonString(json);
  return r.value!;
}

function blocksOf(json: string, opts: BlockOptions = new BlockOptions()): string[] {
  const sink = new TextCollector();
  lastScan = scanBlocks(body(json), opts, sink);
  return sink.blocks;
}

function opts(maxHashBytes: i64, maxBlocks: i32, chunkBytes: i32): BlockOptions {
  const o = new BlockOptions();
  o.maxHashBytes = maxHashBytes;
  o.maxBlocks = maxBlocks;
  o.chunkBytes = chunkBytes;
  return o;
}

describe("chat messages (Higress rules)", () => {
  it("closes a block after each user message and at the last message", () => {
    const b = blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"U1"},
      {"role":"assistant","content":"A1"},{"role":"user","content":"U2"},{"role":"assistant","content":"A2"}]}`);
    expect(b).toStrictEqual(["system:Suser:U1", "assistant:A1user:U2", "assistant:A2"]);
    expect(lastScan.source).toBe(BlockSource.Chat);
    expect(lastScan.blocks).toBe(3);
    expect(lastScan.capped).toBe(false);
  });

  it("a single user message is one block", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":"hello"}]}`)).toStrictEqual(["user:hello"]);
  });

  it("system-only is one block (closed by being last)", () => {
    expect(blocksOf(`{"messages":[{"role":"system","content":"be brief"}]}`)).toStrictEqual(["system:be brief"]);
  });

  it("assistant-first joins the next user message", () => {
    expect(blocksOf(`{"messages":[{"role":"assistant","content":"Hi!"},{"role":"user","content":"Q"}]}`))
      .toStrictEqual(["assistant:Hi!user:Q"]);
  });

  it("tool messages are ordinary messages; null content hashes as empty", () => {
    const b = blocksOf(`{"messages":[{"role":"user","content":"weather?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]},
      {"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"user","content":"thanks"}]}`);
    expect(b).toStrictEqual(["user:weather?", "assistant:tool:sunnyuser:thanks"]);
  });

  it("array (multimodal) content hashes as its raw JSON text, whitespace included", () => {
    const b = blocksOf(`{"messages":[{"role":"user","content":[ {"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`);
    expect(b).toStrictEqual([`user:[ {"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]`]);
  });

  it("decodes string escapes (\\n, \\u00e9, surrogate pairs) before hashing", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":"a\\nb\\u00e9\\ud83d\\ude00"}]}`))
      .toStrictEqual(["user:a\nb\u00e9\u{1F600}"]);
  });

  it("role must be exactly 'user' to close a block", () => {
    expect(blocksOf(`{"messages":[{"role":"User","content":"a"},{"role":"user","content":"b"},{"role":"developer","content":"c"}]}`))
      .toStrictEqual(["User:auser:b", "developer:c"]);
  });

  it("renders numbers, booleans and objects the way gjson's String() does", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":42},{"role":"user","content":1.50},{"role":"user","content":true},{"role":"user","content":{"k": 1}}]}`))
      .toStrictEqual(["user:42", "user:1.5", "user:true", `user:{"k": 1}`]);
  });

  it("one message without role or content makes the whole body invalid (no blocks)", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":"a"},{"role":"assistant"}]}`).length).toBe(0);
    expect(lastScan.source).toBe(BlockSource.Invalid);
    expect(blocksOf(`{"messages":[{"content":"a"}]}`).length).toBe(0);
    expect(lastScan.source).toBe(BlockSource.Invalid);
    expect(blocksOf(`{"messages":["just text"]}`).length).toBe(0);
    expect(lastScan.source).toBe(BlockSource.Invalid);
  });

  it("empty or null messages give no blocks; a single object is one message", () => {
    expect(blocksOf(`{"messages":[]}`).length).toBe(0);
    expect(lastScan.source).toBe(BlockSource.None);
    expect(blocksOf(`{"messages":null,"prompt":"p"}`).length).toBe(0);
    expect(blocksOf(`{"messages":{"role":"user","content":"solo"}}`)).toStrictEqual(["user:solo"]);
  });

  it("uses the first of duplicate keys, as gjson does", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":"first","content":"second"}]}`)).toStrictEqual(["user:first"]);
  });
});

function everyMessage(): BlockOptions {
  const o = new BlockOptions();
  o.everyMessage = true;
  return o;
}

describe("finer blocks (blockBoundary: message)", () => {
  it("every message is a block, so a shared system prompt is a level of its own", () => {
    const a = blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]}`, everyMessage());
    const b = blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q2"}]}`, everyMessage());
    expect(a).toStrictEqual(["system:S", "user:Q1"]);
    expect(b[0]).toBe(a[0]);
    // Higress's rule: the two conversations share nothing.
    expect(blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]}`)[0])
      .not.toBe(blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q2"}]}`)[0]);
  });
  it("a follow-up turn extends the previous turn's blocks", () => {
    const t1 = blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]}`, everyMessage());
    const t2 = blocksOf(`{"messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"},
      {"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]}`, everyMessage());
    expect(t2.length).toBe(4);
    expect(t2.slice(0, 2)).toStrictEqual(t1);
  });
  it("Responses items and instructions close one block each", () => {
    const b = blocksOf(`{"instructions":"I","input":[{"role":"user","content":"U"},{"type":"function_call_output","output":"x"}]}`, everyMessage());
    expect(b.length).toBe(3);
    expect(b[0]).toBe("system:I");
    expect(b[1]).toBe("user:U");
  });
});

describe("completions prompt", () => {
  it("cuts a string prompt into chunkBytes blocks, the last one shorter", () => {
    expect(blocksOf(`{"prompt":"abcdefghij"}`, opts(1 << 20, 64, 4))).toStrictEqual(["abcd", "efgh", "ij"]);
    expect(lastScan.source).toBe(BlockSource.Completion);
  });

  it("prompts sharing a prefix share their leading chunks", () => {
    const a = blocksOf(`{"prompt":"You are a helpful assistant. Question one"}`, opts(1 << 20, 64, 8));
    const b = blocksOf(`{"prompt":"You are a helpful assistant. Question two"}`, opts(1 << 20, 64, 8));
    expect(a.slice(0, 4)).toStrictEqual(b.slice(0, 4));
    expect(a[4]).not.toBe(b[4]);
  });

  it("token-id and batch prompts are chunked as raw JSON text", () => {
    expect(blocksOf(`{"prompt":[1,2,3,4]}`, opts(1 << 20, 64, 4))).toStrictEqual(["[1,2", ",3,4", "]"]);
    expect(blocksOf(`{"prompt":["ab","cd"]}`, opts(1 << 20, 64, 5))).toStrictEqual([`["ab"`, `,"cd"`, "]"]);
  });

  it("an empty prompt gives no blocks", () => {
    expect(blocksOf(`{"prompt":""}`).length).toBe(0);
  });
});

describe("Responses API input", () => {
  it("a string input is chunked after a leading instructions block", () => {
    expect(blocksOf(`{"instructions":"terse","input":"abcdef"}`, opts(1 << 20, 64, 4)))
      .toStrictEqual(["system:terse", "abcd", "ef"]);
    expect(lastScan.source).toBe(BlockSource.Responses);
    expect(blocksOf(`{"input":"abcdef"}`, opts(1 << 20, 64, 4))).toStrictEqual(["abcd", "ef"]);
  });

  it("items work like messages; instructions act as a leading system message", () => {
    const b = blocksOf(`{"instructions":"S","input":[{"role":"user","content":"Q1"},
      {"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"A1"}]},
      {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
      {"type":"function_call_output","call_id":"c1","output":"42"},{"role":"user","content":"Q2"}]}`);
    expect(b).toStrictEqual([
      "system:Suser:Q1",
      `assistant:[{"type":"output_text","text":"A1"}]` +
        `function_call:{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}` +
        `function_call_output:{"type":"function_call_output","call_id":"c1","output":"42"}user:Q2`,
    ]);
  });

  it("an item without content hashes role and ':' only", () => {
    expect(blocksOf(`{"input":[{"role":"user"}]}`)).toStrictEqual(["user:"]);
  });
});

describe("caps", () => {
  it("drops the block that crosses maxHashBytes and every block after it", () => {
    // Blocks: "user:aaaa" (9 bytes), "user:bbbb" (9), "user:cccc" (9); cap 20 keeps two.
    const json = `{"messages":[{"role":"user","content":"aaaa"},{"role":"user","content":"bbbb"},{"role":"user","content":"cccc"}]}`;
    expect(blocksOf(json, opts(20, 64, 1024))).toStrictEqual(["user:aaaa", "user:bbbb"]);
    expect(lastScan.capped).toBe(true);
    expect(lastScan.bytes).toBe(18);
    expect(blocksOf(json, opts(27, 64, 1024)).length).toBe(3);
    expect(lastScan.capped).toBe(false);
  });

  it("a first block larger than the cap leaves no blocks, never a trap", () => {
    expect(blocksOf(`{"messages":[{"role":"user","content":"0123456789"}]}`, opts(8, 64, 1024)).length).toBe(0);
    expect(lastScan.capped).toBe(true);
  });

  it("keeps at most maxBlocks blocks", () => {
    expect(blocksOf(`{"prompt":"abcdefghij"}`, opts(1 << 20, 2, 3))).toStrictEqual(["abc", "def"]);
    expect(lastScan.capped).toBe(true);
    expect(blocksOf(`{"prompt":"abcdef"}`, opts(1 << 20, 2, 3)).length).toBe(2);
    expect(lastScan.capped).toBe(false);
  });
});

describe("goFormatFloat (strconv.FormatFloat(x, 'f', -1, 64))", () => {
  it("prints shortest digits without exponent", () => {
    expect(goFormatFloat(1.5)).toBe("1.5");
    expect(goFormatFloat(100.0)).toBe("100");
    expect(goFormatFloat(1e21)).toBe("1000000000000000000000");
    expect(goFormatFloat(1.5e-7)).toBe("0.00000015");
    expect(goFormatFloat(0.000001)).toBe("0.000001");
    expect(goFormatFloat(-2.25)).toBe("-2.25");
    expect(goFormatFloat(-0.0)).toBe("-0");
    expect(goFormatFloat(0.0)).toBe("0");
    expect(goFormatFloat(Infinity)).toBe("+Inf");
    expect(goFormatFloat(123456.789)).toBe("123456.789");
  });
});
