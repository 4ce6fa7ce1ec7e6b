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
