// Independent TypeScript computation of Higress ai-load-balancer prefix_cache keys, written from
// the algorithm's description (anchor-higress-ai-load-balancer.md), not from the plugin's code:
// for each message append role ":" content (gjson String() of each), close a block after a
// "user" message and at the last message, hash each block with SHA-1 (uppercase hex), and XOR
// the hashes 1..i (byte-wise on the hex) for level i. Used to prove the plugin's keys match.
// Input: a body as a JS value that was serialised with JSON.stringify (compact), so the raw JSON
// text of any sub-value equals JSON.stringify of it. Returns null where Higress skips balancing
// (a message lacking role or content); [] when there are no messages.
import { createHash } from "node:crypto";

/** Go strconv.FormatFloat(x, 'f', -1, 64): shortest round-trip digits, never an exponent. */
export function goFormatFloatF(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [mantissa, expPart] = Math.abs(x).toExponential().split("e"); // shortest digits in JS
  const digits = mantissa.replace(".", "");
  const point = 1 + Number(expPart); // digits before the decimal point
  const sign = x < 0 ? "-" : "";
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** gjson Result.String() of a value whose raw text is JSON.stringify(value). */
export function gjsonString(v: unknown): string {
  if (v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") {
    const raw = JSON.stringify(v);
    return /^-?[0-9]+$/.test(raw) ? raw : goFormatFloatF(v);
  }
  return JSON.stringify(v);
}

/**
 * The texts of Higress's blocks for a chat body, or null when Higress would skip it.
 * everyMessage = the plugin's default outside compat mode (lb_config blockBoundary: message):
 * every message closes a block, not only user messages.
 */
export function higressBlockTexts(body: { messages?: unknown }, everyMessage = false): string[] | null {
  const m = body.messages;
  // gjson Array(): missing or null -> none; an array -> its elements; anything else -> [it].
  const messages: unknown[] = m === undefined || m === null ? [] : Array.isArray(m) ? m : [m];
  const blocks: string[] = [];
  let text = "";
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    if (msg === null || typeof msg !== "object" || Array.isArray(msg) || !("role" in msg) || !("content" in msg)) return null;
    const role = gjsonString((msg as Record<string, unknown>).role);
    text += role + ":" + gjsonString((msg as Record<string, unknown>).content);
    if (everyMessage || role === "user" || i === messages.length - 1) {
      blocks.push(text);
      text = "";
    }
  }
  return blocks;
}

export function sha1HexUpper(text: string, salt = ""): string {
  return createHash("sha1").update(salt + text, "utf8").digest("hex").toUpperCase();
}

/** Byte-wise XOR of two equal-length hex strings, uppercase. */
export function hexXor(a: string, b: string): string {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  for (let i = 0; i < x.length; i++) x[i] ^= y[i];
  return x.toString("hex").toUpperCase();
}

/**
 * Level keys, shallowest first. positionSalt = the plugin's orderSensitive extension (not
 * Higress): block j (1-based) is hashed as `${j}:` + text.
 */
export function higressPrefixKeys(body: { messages?: unknown }, positionSalt = false, everyMessage = false): string[] | null {
  const blocks = higressBlockTexts(body, everyMessage);
  if (blocks === null) return null;
  const keys: string[] = [];
  blocks.forEach((text, j) => {
    const h = sha1HexUpper(text, positionSalt ? `${j + 1}:` : "");
    keys.push(j === 0 ? h : hexXor(keys[j - 1], h));
  });
  return keys;
}

// ---- Raw-text reference (issue 12): what Higress computes from the body's bytes, where JSON.parse
// would already have lost the difference (gjson's decoding of invalid surrogate escapes). ----

/**
 * gjson v1.18.0 `unescape` (gjson.go) of a JSON string body (between the quotes), as UTF-8 bytes:
 * a \uXXXX in D800-DFFF followed by another \uXXXX consumes both (utf16.DecodeRune: a valid
 * pair or U+FFFD); a surrogate with no \u after it is U+FFFD (utf8.EncodeRune).
 */
export function gjsonUnescape(body: string): Buffer {
  const out: number[] = [];
  const push = (cp: number) => out.push(...Buffer.from(String.fromCodePoint(cp), "utf8"));
  const hex4 = (at: number) => parseInt(body.slice(at, at + 4), 16);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch !== "\\") {
      // Raw text: a code point at a time (a UTF-16 pair is one character).
      const cp = body.codePointAt(i)!;
      if (cp > 0xffff) i++;
      push(cp);
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    if (e in simple) { out.push(simple[e].charCodeAt(0)); continue; }
    let cp = hex4(i + 1);
    i += 4;
    if (cp >= 0xd800 && cp < 0xe000) {
      if (body[i + 1] === "\\" && body[i + 2] === "u") {
        const next = hex4(i + 3);
        i += 6;
        cp = cp < 0xdc00 && next >= 0xdc00 && next < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00) : 0xfffd;
      } else {
        cp = 0xfffd;
      }
    }
    push(cp);
  }
  return Buffer.from(out);
}

interface RawNode { kind: "string" | "number" | "literal" | "array" | "object"; start: number; end: number; members: Array<[string, RawNode]>; items: RawNode[] }

/** A small JSON reader that keeps each value's raw text range (input: valid JSON). */
export function readRaw(text: string): RawNode {
  let i = 0;
  const ws = () => { while (/\s/.test(text[i] ?? "")) i++; };
  const str = () => { const s = i++; while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1; i++; return s; };
  const value = (): RawNode => {
    ws();
    const start = i;
    const node: RawNode = { kind: "literal", start, end: start, members: [], items: [] };
    if (text[i] === '"') { str(); node.kind = "string"; }
    else if (text[i] === "{" || text[i] === "[") {
      const obj = text[i++] === "{";
      node.kind = obj ? "object" : "array";
      ws();
      while (text[i] !== (obj ? "}" : "]")) {
        if (obj) {
          ws();
          const k = str();
          const name = JSON.parse(text.slice(k, i)) as string;
          ws(); i++; // ':'
          node.members.push([name, value()]);
        } else node.items.push(value());
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i])) i++;
      node.kind = /^-?[0-9]/.test(text.slice(start, i)) ? "number" : "literal";
    }
    node.end = i;
    return node;
  };
  return value();
}

/** gjson String() of a raw value, as UTF-8 bytes. */
function gjsonRawString(text: string, v: RawNode): Buffer {
  const raw = text.slice(v.start, v.end);
  if (v.kind === "string") return raw.includes("\\") ? gjsonUnescape(raw.slice(1, -1)) : Buffer.from(raw.slice(1, -1), "utf8");
  if (raw === "null") return Buffer.alloc(0);
  if (v.kind === "number" && !/^-?[0-9]+$/.test(raw)) return Buffer.from(goFormatFloatF(Number(raw)), "utf8");
  return Buffer.from(raw, "utf8");
}

/**
 * Higress's level keys computed from the body text itself (compat mode): `messages` only (no
 * prompt/input handling, no level cap), gjson's decoding. null where Higress skips balancing.
 */
export function higressPrefixKeysFromText(text: string): string[] | null {
  const root = readRaw(text);
  const first = (n: RawNode, key: string) => (n.kind === "object" ? n.members.find(([k]) => k === key)?.[1] : undefined);
  const m = first(root, "messages");
  const list = m === undefined || text.slice(m.start, m.end) === "null" ? [] : m.kind === "array" ? m.items : [m];
  const blocks: Buffer[] = [];
  let parts: Buffer[] = [];
  for (let i = 0; i < list.length; i++) {
    const role = first(list[i], "role");
    const content = first(list[i], "content");
    if (role === undefined || content === undefined) return null;
    const r = gjsonRawString(text, role);
    parts.push(r, Buffer.from(":"), gjsonRawString(text, content));
    if (r.toString("latin1") === "user" || i === list.length - 1) { blocks.push(Buffer.concat(parts)); parts = []; }
  }
  const keys: string[] = [];
  blocks.forEach((b, j) => {
    const h = createHash("sha1").update(b).digest("hex").toUpperCase();
    keys.push(j === 0 ? h : hexXor(keys[j - 1], h));
  });
  return keys;
}

/** The model's part of the plugin's own (non-compat) key names: 16 lowercase hex digits of
 *  SHA-1(model) (assembly/prefix/keys.ts modelTag), "" for no model. */
export function modelTag(model: string): string {
  return model === "" ? "" : createHash("sha1").update(model, "utf8").digest("hex").slice(0, 16);
}
