// fast-check arbitraries for the fuzz properties: request bodies of every API shape (valid and
// broken), RESP replies (valid, wrong-shaped, truncated, random bytes), configurations (random
// objects and mutations of valid ones) and Prometheus texts (random and mutated fixtures).
import fc from "fast-check";

// ---- request bodies ----
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }), // any code point, surrogate pairs included
  fc.constantFrom("\\ud800", "\\udfff", "\\ud83d\\ude00", "\\u0000", "\\\"", "\\\\", "\\x", "\\u12"), // raw escapes (some invalid)
  fc.integer({ min: 1, max: 300_000 }).map((n) => "x".repeat(n)), // huge field
);
const str = (t: string) => (t.includes("\\") ? `"${t}"` : JSON.stringify(t)); // keep raw escapes raw
const chatMessage = fc.tuple(fc.constantFrom("user", "system", "assistant", "tool", ""), fc.oneof(text, fc.array(text, { maxLength: 3 })))
  .map(([role, c]) => `{"role":${JSON.stringify(role)},"content":${Array.isArray(c) ? `[${c.map((t) => `{"type":"text","text":${str(t)}}`).join(",")}]` : str(c)}}`);
const model = fc.oneof(fc.constantFrom("m", "sim-tiny", ""), text);
const extras = fc.constantFrom("", ',"stream":true', ',"max_tokens":16', ',"max_tokens":-1', ',"stream":"yes"', ',"n":1e400', ',"user":null',
  ',"max_tokens":1e999', ',"max_tokens":-1e999', ',"max_tokens":1e308', ',"max_completion_tokens":1e400', ',"max_tokens":0.5', ',"max_tokens":"16"');
const chat = fc.tuple(model, fc.array(chatMessage, { maxLength: 4 }), extras).map(([m, ms, x]) => `{"model":${str(m)},"messages":[${ms.join(",")}]${x}}`);
const completion = fc.tuple(model, fc.oneof(text.map(str), fc.array(text.map(str), { maxLength: 3 }).map((a) => `[${a.join(",")}]`), fc.array(fc.integer(), { maxLength: 20 }).map((a) => JSON.stringify(a))), extras)
  .map(([m, p, x]) => `{"model":${str(m)},"prompt":${p}${x}}`);
const responses = fc.tuple(model, fc.oneof(text.map(str), fc.array(chatMessage, { maxLength: 3 }).map((a) => `[${a.join(",")}]`)), fc.option(text))
  .map(([m, i, ins]) => `{"model":${str(m)},"input":${i}${ins === null ? "" : `,"instructions":${str(ins)}`}}`);
const deep = fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom("[", "{\"a\":"), fc.boolean())
  .map(([n, open, closed]) => `{"model":"m","messages":${open.repeat(n)}1${closed ? (open === "[" ? "]" : "}").repeat(n) : ""}}`);

/** A body as bytes: valid API shapes, random JSON, broken JSON, invalid UTF-8. */
export const body: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 3, arbitrary: fc.oneof(chat, completion, responses).map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "")) },
  { weight: 1, arbitrary: deep.map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(chat, completion, responses), fc.nat()).map(([s, cut]) => Buffer.from(s).subarray(0, cut % (s.length + 1))) },
  { weight: 1, arbitrary: fc.tuple(chat, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([s, junk, at]) => {
    const b = Buffer.from(s); const i = at % (b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from(junk.map((x) => x | 0x80)), b.subarray(i)]); // invalid UTF-8 inside
  }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
);

export const apiPath = fc.constantFrom("/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/embeddings", "/");

/** Split points for delivering a body in up to four chunks. */
export const chunking = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 });
export function chunks(b: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * b.length)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const a of at) { out.push(b.subarray(prev, a)); prev = a; }
  out.push(b.subarray(prev));
  return out;
}

// ---- RESP replies ----
const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const respValue: fc.Arbitrary<string> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small", withCrossShrink: true },
    fc.string({ maxLength: 20 }).map((s) => `+${s.replace(/[\r\n]/g, "")}\r\n`),
    fc.string({ maxLength: 20 }).map((s) => `-${s.replace(/[\r\n]/g, "")}\r\n`),
    fc.oneof(fc.integer(), fc.constantFrom(-1, 2 ** 53, -(2 ** 63))).map((n) => `:${n}\r\n`),
    fc.string({ maxLength: 30 }).map(bulk),
    fc.constantFrom("$-1\r\n", "*-1\r\n", "*0\r\n", "$0\r\n\r\n", "_\r\n", "$99999999999\r\n", "*99999999999\r\n", ":abc\r\n", "$3\r\nab\r\n"),
    fc.array(tie("v") as fc.Arbitrary<string>, { maxLength: 4 }).map((a) => `*${a.length}\r\n${a.join("")}`),
  ),
})).v as fc.Arbitrary<string>;
const word = fc.constantFrom("OK", "SHED", "NEED_CANDIDATES", "NO_CANDIDATE", "ok", "");
const acquireShaped = fc.tuple(word, fc.oneof(fc.constantFrom("10.0.0.1:8000", "10.0.0.3:8000", "10.9.9.9:8000", "", "x y", "10.0.0.1:8000\u0000"), fc.string({ maxLength: 30 })),
  fc.oneof(fc.constantFrom("0", "-1", "1e308", "NaN", "", "99999999999999999999"), fc.integer().map(String)))
  .map(([w, h, l]) => `*3\r\n${bulk(w)}${bulk(h)}${bulk(l)}`);

/** A reply to one Redis call: a RESP string, null (network failure) or undefined (never answered). */
export const respReply: fc.Arbitrary<string | Buffer | null | undefined> = fc.oneof(
  { weight: 3, arbitrary: acquireShaped },
  { weight: 3, arbitrary: respValue },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(acquireShaped, respValue), fc.nat()).map(([s, cut]) => Buffer.from(s).subarray(0, cut % Math.max(1, Buffer.byteLength(s)))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
  { weight: 1, arbitrary: fc.constantFrom("-NOSCRIPT No matching script.\r\n", "-ERR llmlb: lease_id must not be empty\r\n", "-BUSY Redis is busy\r\n", "-LOADING\r\n") },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
);

// ---- Prometheus texts ----
const promName = fc.constantFrom("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
  "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "vllm:lora_requests_info", "x");
const promValue = fc.oneof(fc.double().map(String), fc.constantFrom("NaN", "+Inf", "-Inf", "1e999", "-0", "0x10", "", "1_000", "٣"), fc.integer().map(String));
const promLabels = fc.array(fc.tuple(fc.constantFrom("engine", "model_name", "max_lora", "running_lora_adapters", "le", ""), fc.string({ maxLength: 12 })), { maxLength: 3 })
  .map((ls) => (ls.length ? `{${ls.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}` : ""));
const promLine = fc.oneof(
  fc.tuple(promName, promLabels, promValue, fc.option(fc.integer())).map(([n, l, v, ts]) => `${n}${l} ${v}${ts === null ? "" : ` ${ts}`}`),
  fc.tuple(fc.constantFrom("# TYPE", "# HELP", "#"), promName, fc.string({ maxLength: 12 })).map(([a, n, t]) => `${a} ${n} ${t}`),
  fc.string({ maxLength: 60 }),
);
export const randomMetrics = fc.array(promLine, { maxLength: 30 }).map((ls) => ls.join("\n"));

/** A mutation of a real /metrics text: lines dropped or duplicated, numbers replaced, bytes flipped, cut. */
export function mutatedMetrics(fixtures: string[]): fc.Arbitrary<string> {
  const op = fc.oneof(
    fc.tuple(fc.constant("drop"), fc.nat(), fc.constant("")),
    fc.tuple(fc.constant("dup"), fc.nat(), fc.constant("")),
    fc.tuple(fc.constant("value"), fc.nat(), promValue),
    fc.tuple(fc.constant("flip"), fc.nat(), fc.string({ unit: "binary", minLength: 1, maxLength: 3 })),
    fc.tuple(fc.constant("cut"), fc.nat(), fc.constant("")),
  );
  return fc.tuple(fc.constantFrom(...fixtures), fc.array(op, { minLength: 1, maxLength: 6 })).map(([base, ops]) => {
    let t = base;
    for (const [kind, at, v] of ops) {
      const lines = t.split("\n");
      const i = lines.length ? at % lines.length : 0;
      if (kind === "drop") lines.splice(i, 1);
      else if (kind === "dup") lines.splice(i, 0, lines[i] ?? "");
      else if (kind === "value") lines[i] = (lines[i] ?? "").replace(/\S+$/, v);
      else if (kind === "flip") { const p = at % (t.length + 1); t = t.slice(0, p) + v + t.slice(p + 1); continue; }
      else { t = t.slice(0, at % (t.length + 1)); continue; }
      t = lines.join("\n");
    }
    return t;
  });
}

// ---- configurations ----
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** Replaces, deletes or adds at one path of a valid configuration (or garbles it as text). */
export function mutatedConfig(valid: Array<Record<string, Json>>): fc.Arbitrary<string> {
  const junk: fc.Arbitrary<Json> = fc.oneof(fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
    fc.constantFrom<Json>("3s", "10abc", "6379; FLUSHALL", "x bad header", "a\r\nb", "10.0.0.1 :80", -1, 0, 1e300, "", [], {}, true, "٣"));
  const step = fc.tuple(fc.nat(), fc.constantFrom("set", "delete", "add"), junk, fc.string({ minLength: 1, maxLength: 12 }));
  const asObject = fc.tuple(fc.constantFrom(...valid), fc.array(step, { minLength: 1, maxLength: 3 })).map(([base, steps]) => {
    const doc = structuredClone(base) as Json;
    for (const [at, kind, value, name] of steps) {
      const objs: Array<{ [k: string]: Json } | Json[]> = [];
      const walk = (v: Json) => { if (v && typeof v === "object") { objs.push(v); for (const c of Object.values(v)) walk(c); } };
      walk(doc);
      const target = objs[at % objs.length];
      const keys = Object.keys(target);
      const key = keys.length ? keys[at % keys.length] : name;
      const fresh = structuredClone(value); // constants are shared between runs: never insert one twice
      if (Array.isArray(target)) { if (kind === "delete") target.splice(Number(key), 1); else target[Number(key) || 0] = fresh; continue; }
      if (kind === "delete") delete target[key];
      else if (kind === "set") target[key] = fresh;
      else target[name] = fresh;
    }
    return JSON.stringify(doc);
  });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...valid).map((v) => JSON.stringify(v)) },
    { weight: 4, arbitrary: asObject },
    { weight: 1, arbitrary: fc.tuple(asObject, fc.nat()).map(([t, cut]) => t.slice(0, cut % (t.length + 1))) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "") },
    { weight: 1, arbitrary: fc.object({ maxDepth: 2 }).map((o) => JSON.stringify({ lb_policy: "global_least_request", lb_config: o })) },
  );
}

/** A token the hostile configurations put where a secret may sit (a header line in a header-name
 *  key, a priority value, a password): the properties check no log line ever shows it. */
export const TOKEN = "tok-9Zq41Vb7Lm";

/** Values Higress's gjson reads one way or another: numbers and booleans as strings, "" (a value
 *  left empty), infinities and NaN as text, a header line holding the token. */
const gjsonForms: fc.Arbitrary<Json> = fc.constantFrom<Json>("1e3", "10.0", ".5", "+1", "0500", "-0", "NaN", "Infinity", "-Infinity",
  "true", "FALSE", "t", "yes", "on", 1, 0, 2, "", null, `Authorization: Bearer ${TOKEN}`, `x-key\r\n${TOKEN}`, TOKEN);

/** A number as JSON text that no double holds exactly, or holds only as an infinity. */
const hugeNumber = fc.constantFrom("1e400", "-1e400", "9223372036854775808", "-9223372036854775809", "1E-400", "-0", "0.00000000000000000000001", "123456789012345678901234567890");

/** A piece of text with characters a log line or a UTF-16 string may mishandle. */
const oddText = fc.constantFrom("\\ud800", "\\udfff", "\\u0000", "\\u202e", "\\ufeff", "é", "\\n", "\\r\\n", "\\\\", "\\\"");

function serialize(v: Json, dupAt: number, counter: { n: number }): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((c) => serialize(c, dupAt, counter)).join(",")}]`;
  const own = counter.n++;
  const parts = Object.entries(v).map(([k, c]) => `${JSON.stringify(k)}:${serialize(c, dupAt, counter)}`);
  if (own === dupAt && parts.length > 0) parts.push(parts[0]); // the object's first member, written twice
  return `{${parts.join(",")}}`;
}

/**
 * Hostile configurations: a valid one with gjson's odd forms set at some key, a key written twice,
 * a number no double holds, odd characters inside a string, nesting thousands deep, a 1 MB value
 * or key; and a valid one with the token in the positions a secret may take.
 */
export function hostileConfig(valid: Array<Record<string, Json>>): fc.Arbitrary<string> {
  const base = fc.constantFrom(...valid);
  const objects = (doc: Json) => { const out: Array<{ [k: string]: Json }> = []; const walk = (v: Json) => { if (v && typeof v === "object") { if (!Array.isArray(v)) out.push(v); for (const c of Object.values(v)) walk(c); } }; walk(doc); return out; };
  const setSomewhere = (doc: Json, at: number, value: Json, keyOf: (keys: string[]) => string) => {
    const objs = objects(doc);
    const target = objs[at % objs.length];
    target[keyOf(Object.keys(target))] = value;
    return doc;
  };
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(base, fc.nat(), gjsonForms).map(([b, at, v]) => JSON.stringify(setSomewhere(structuredClone(b) as Json, at, v, (ks) => ks[at % Math.max(1, ks.length)] ?? "k"))) },
    { weight: 2, arbitrary: fc.tuple(base, fc.nat()).map(([b, at]) => serialize(b as Json, at % Math.max(1, objects(b as Json).length), { n: 0 })) },
    { weight: 2, arbitrary: fc.tuple(base, fc.nat(), hugeNumber).map(([b, at, n]) => {
      const t = JSON.stringify(b);
      const nums = [...t.matchAll(/:(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?=[,}\]])/g)];
      if (nums.length === 0) return t.replace(/}$/, `,"timeout":${n}}`);
      const m = nums[at % nums.length];
      return t.slice(0, m.index! + 1) + n + t.slice(m.index! + 1 + m[1].length);
    }) },
    { weight: 2, arbitrary: fc.tuple(base, fc.nat(), oddText).map(([b, at, odd]) => {
      const t = JSON.stringify(b);
      const quotes = [...t.matchAll(/"/g)].map((m) => m.index!);
      const q = quotes[(at % Math.max(1, quotes.length / 2)) * 2] ?? 0; // an opening quote
      return t.slice(0, q + 1) + odd + t.slice(q + 1);
    }) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 60, max: 100_000 }), fc.constantFrom("[", "{\"a\":"), fc.boolean()).map(([n, open, closed]) =>
      `{"lb_policy":"endpoint_metrics","lb_config":{"rate_limit":${open.repeat(n)}1${closed ? (open === "[" ? "]" : "}").repeat(n) : ""}}}`) },
    { weight: 1, arbitrary: fc.tuple(base, fc.nat(), fc.boolean()).map(([b, at, asKey]) => {
      const big = "x".repeat(1 << 20);
      return JSON.stringify(setSomewhere(structuredClone(b) as Json, at, asKey ? 1 : big, (ks) => (asKey ? big : ks[at % Math.max(1, ks.length)] ?? "k")));
    }) },
  );
}
