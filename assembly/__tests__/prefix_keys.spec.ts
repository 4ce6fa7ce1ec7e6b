// Level keys: Higress's SHA-1 XOR chain (checked against Node-computed digests), its documented
// collisions (swapped blocks, identical blocks cancelling), the order-sensitive fix, key
// namespacing, and incremental hashing of large bodies.
import { parseJsonString } from "../json/parse";
import { JsonValue } from "../json/value";
import { sha1HexUpper } from "../util/sha1";
import { utf8Encode } from "../util/utf8";
import { BlockSource } from "../prefix/blocks";
import { KeyOptions, prefixLevelKeys, levelKeyPrefix } from "../prefix/keys";

const NS = "{llmlb:r1:outbound|8000||vllm.static}";
const ZERO_KEY = "0000000000000000000000000000000000000000";

function body(json: string): JsonValue {
  return parseJsonString(json).value!;
}

function options(compat: bool, orderSensitive: bool, byModel: bool = true): KeyOptions {
  const o = new KeyOptions();
  o.compat = compat;
  o.orderSensitive = orderSensitive;
  o.namespaceByModel = byModel;
  return o;
}

function keys(json: string, o: KeyOptions): string[] {
  return prefixLevelKeys(body(json), o, NS).keys;
}

function hex(s: string): string { return sha1HexUpper(utf8Encode(s)); }

function twoUsers(a: string, b: string): string {
  return `{"model":"m","messages":[{"role":"user","content":"${a}"},{"role":"user","content":"${b}"}]}`;
}

describe("Higress-compatible keys", () => {
  it("level keys are the XOR chain of uppercase SHA-1 block hashes (Node-computed values)", () => {
    const k = keys(`{"messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Hi"},
      {"role":"assistant","content":"Hello!"},{"role":"user","content":"What is 2+2?"}]}`, options(true, false));
    expect(k).toStrictEqual([
      "DC6E080F28569CE3D07E77FC3A00DF1CCD9DA20E", // SHA-1("system:You are helpful.user:Hi")
      "62EE2EB1856F804718FE25AA35DBBAEB27D78035", // xor SHA-1("assistant:Hello!user:What is 2+2?")
    ]);
  });

  it("level 1 is the first block's own hash", () => {
    expect(keys(`{"messages":[{"role":"user","content":"hello"}]}`, options(true, false))).toStrictEqual([hex("user:hello")]);
  });

  it("a longer conversation extends the shorter one's keys (the tree path)", () => {
    const short = keys(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, options(true, false));
    const long = keys(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},
      {"role":"assistant","content":"d"},{"role":"user","content":"e"}]}`, options(true, false));
    expect(long.length).toBe(3);
    expect(long.slice(0, 2)).toStrictEqual(short);
  });

  it("documented defect: swapped blocks give the same level-2 key", () => {
    const ab = keys(twoUsers("A", "B"), options(true, false));
    const ba = keys(twoUsers("B", "A"), options(true, false));
    expect(ab[0]).not.toBe(ba[0]);
    expect(ab[1]).toBe(ba[1]);
  });

  it("documented defect: two identical blocks cancel to the all-zero key", () => {
    expect(keys(twoUsers("A", "A"), options(true, false))[1]).toBe(ZERO_KEY);
  });

  it("compat keys are bare 40-hex strings, whatever the model", () => {
    const k = keys(twoUsers("A", "B"), options(true, false));
    expect(k[0].length).toBe(40);
    expect(keys(twoUsers("A", "B").replace(`"m"`, `"other"`), options(true, false))).toStrictEqual(k);
  });
});

describe("orderSensitive keys", () => {
  it("salts block j with its position: SHA-1(j ':' block)", () => {
    const k = keys(twoUsers("A", "B"), options(false, true));
    expect(k[0]).toBe(NS + ":p:m:" + hex("1:user:A"));
  });

  it("swapped blocks no longer collide", () => {
    const ab = keys(twoUsers("A", "B"), options(false, true));
    const ba = keys(twoUsers("B", "A"), options(false, true));
    expect(ab[1]).not.toBe(ba[1]);
  });

  it("identical blocks no longer cancel", () => {
    const aa = keys(twoUsers("A", "A"), options(false, true));
    expect(aa[1]).not.toBe(NS + ":p:m:" + ZERO_KEY);
    expect(aa[1]).not.toBe(aa[0]);
  });

  it("compat wins over orderSensitive (Higress keys are never salted)", () => {
    expect(keys(twoUsers("A", "B"), options(true, true))).toStrictEqual(keys(twoUsers("A", "B"), options(true, false)));
  });
});

describe("namespacing", () => {
  it("prefixes the pool's hash tag and the model", () => {
    const k = keys(twoUsers("A", "B"), options(false, false));
    expect(k[0]).toBe(NS + ":p:m:" + hex("user:A"));
    expect(k[0].startsWith("{")).toBe(true);
  });

  it("different models get different keys unless namespaceByModel is off", () => {
    const other = twoUsers("A", "B").replace(`"m"`, `"other"`);
    expect(keys(other, options(false, false))[0]).not.toBe(keys(twoUsers("A", "B"), options(false, false))[0]);
    expect(keys(other, options(false, false, false))).toStrictEqual(keys(twoUsers("A", "B"), options(false, false, false)));
    expect(keys(other, options(false, false, false))[0]).toBe(NS + ":p::" + hex("user:A"));
  });

  it("levelKeyPrefix is empty in compat mode", () => {
    expect(levelKeyPrefix(NS, "m", options(true, false))).toBe("");
    expect(levelKeyPrefix(NS, "m", options(false, false))).toBe(NS + ":p:m:");
  });

  it("a usual model id stays as is; a long or unusual one is hashed (bounded key names)", () => {
    expect(levelKeyPrefix(NS, "meta-llama/Llama-3.1-8B-Instruct", options(false, false))).toBe(NS + ":p:meta-llama/Llama-3.1-8B-Instruct:");
    const long = "m".repeat(100000);
    expect(levelKeyPrefix(NS, long, options(false, false))).toBe(NS + ":p:sha1-" + hex(long) + ":");
    expect(levelKeyPrefix(NS, "a b\r\nc", options(false, false))).toBe(NS + ":p:sha1-" + hex("a b\r\nc") + ":");
    expect(levelKeyPrefix(NS, "m".repeat(64), options(false, false))).toBe(NS + ":p:" + "m".repeat(64) + ":");
  });
});

describe("bodies without usable blocks", () => {
  it("yield no keys and say why", () => {
    const invalid = prefixLevelKeys(body(`{"messages":[{"role":"user"}]}`), options(true, false), NS);
    expect(invalid.keys.length).toBe(0);
    expect(invalid.scan.source).toBe(BlockSource.Invalid);
    const none = prefixLevelKeys(body(`{"model":"m"}`), options(true, false), NS);
    expect(none.keys.length).toBe(0);
    expect(none.scan.source).toBe(BlockSource.None);
  });
});

describe("incremental hashing", () => {
  it("a 128 KB message hashes like the one-shot SHA-1 of its block text", () => {
    const big = "0123456789abcdef".repeat(8192); // 128 KB
    const k = keys(`{"messages":[{"role":"system","content":"${big}"},{"role":"user","content":"q"}]}`, options(true, false));
    expect(k).toStrictEqual([hex("system:" + big + "user:q")]);
  });

  it("the level cap bounds the keys of a long prompt", () => {
    const o = options(true, false);
    o.chunkBytes = 16;
    o.maxBlocks = 3;
    const r = prefixLevelKeys(body(`{"prompt":"${"x".repeat(100)}"}`), o, NS);
    expect(r.keys.length).toBe(3);
    expect(r.scan.capped).toBe(true);
    expect(r.keys[0]).toBe(hex("x".repeat(16)));
  });
});
