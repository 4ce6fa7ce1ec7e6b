// Property-based fuzzing of the plugin configuration through the release .wasm: random JSON and
// mutations of every documented configuration (README, envoy/) plus ones holding secrets, and
// hostile shapes of them (gjson's odd forms, repeated keys, huge numbers, odd characters, deep
// nesting, 1 MB values or keys). Properties: configure never traps; a refusal logs a message naming
// a key of the configuration (or one the plugin requires); no log line shows a secret (password,
// username, priority values, a header line pasted into a header-name key) and every log line is one
// line of bounded size; an accepted configuration serves a request (forwarded or answered < 500).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TestHost } from "../../host-test/facade/index.js";
import { readmeConfigs, wasmPluginConfigs } from "../deploy/doc-configs.js";
import { CLUSTER, FUZZ_SEED, HOSTS, METRICS_CLUSTER, REDIS_CLUSTER, WASM, outcome, runs, FUZZ_TIMEOUT_MS, saneReply, scriptCall } from "./fuzz-host.js";
import { hostileConfig, mutatedConfig, TOKEN } from "./arbitraries.js";

const SECRET = "pw-7Qx93Lk2";
const withPassword = { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, username: "lb", password: SECRET, timeout: 200 } };
/** A configuration holding the token where secrets sit: a password, a priority value, a header line in a header-name key. */
const withSecrets = { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, password: TOKEN, highPriorityValue: `v-${TOKEN}`, debugHeader: `Authorization: Bearer ${TOKEN}` } };
const bases = [withPassword, ...wasmPluginConfigs().map((d) => d.config), ...readmeConfigs().map((d) => d.config)];

function keysOf(v: unknown, into = new Set<string>()): Set<string> {
  if (v && typeof v === "object") for (const [k, c] of Object.entries(v)) { if (!Array.isArray(v)) into.add(k); keysOf(c, into); }
  return into;
}
const knownKeys = keysOf(bases);
/** Password values in a configuration (any depth), as the text a leak would show. */
function passwords(v: unknown, into: string[] = []): string[] {
  if (v && typeof v === "object") for (const [k, c] of Object.entries(v)) { if (k === "password" && c !== null && typeof c !== "object") into.push(String(c)); passwords(c, into); }
  return into;
}

/** Keys whose value may be a secret or a header value: never shown. */
const SECRET_KEYS = new Set(["password", "username", "highPriorityValue", "lowPriorityValue"]);
/** Keys holding a header name: a refusal may show the name up to its first character not allowed. */
const HEADER_NAME_KEYS = new Set(["debugHeader", "destinationHeader", "priorityHeader", "header", "sloTtftHeader", "sloTpotHeader", "queueTenantHeader", "hash_header", "cluster_header"]);
const TCHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]*/;

/** Text that would be a leak if a log line showed it: secret values, and what follows the first
 *  character not allowed in a header-name key's value. */
function secretsIn(v: unknown, into: string[] = []): string[] {
  if (v && typeof v === "object") {
    for (const [k, c] of Object.entries(v)) {
      if (SECRET_KEYS.has(k) && c !== null && typeof c !== "object") into.push(String(c));
      if (HEADER_NAME_KEYS.has(k) && typeof c === "string") into.push(c.slice((TCHAR.exec(c)?.[0].length ?? 0) + 1).trim());
      secretsIn(c, into);
    }
  }
  return into.filter((t) => t.length >= 4);
}

/**
 * Configures a fresh host with `text` and checks the properties: no VM failure; a refusal says why
 * and names a key of the configuration (or one the plugin requires); an accepted configuration
 * serves a request (forwarded or answered < 500); no log line shows a secret, and every log line
 * is one line of bounded size.
 */
async function checkConfiguration(text: string, counts: { refused: number; accepted: number }): Promise<void> {
  const h = await TestHost.create({ wasm: WASM, configuration: text, clusters: { [CLUSTER]: HOSTS.map((address) => ({ address })), [METRICS_CLUSTER]: [] }, redisClusters: [REDIS_CLUSTER], logLevel: "trace" });
  try {
    const failed = () => h.vms.find((v) => v.failed)?.failureReason ?? null;
    expect(failed()).toBeNull();
    let doc: unknown = null;
    // Not JSON: refused without a key to name. Nested too deep for this test's own recursion
    // (keysOf, secretsIn): the plugin still gets it; only its message is not checked for a key.
    try { doc = JSON.parse(text); keysOf(doc); } catch { doc = null; }
    if (!h.configured.every(Boolean)) {
      counts.refused++;
      const why = h.logMessages("warn").join(" | ");
      expect(why, "a refusal says why").not.toBe("");
      // Refused as JSON (the plugin's reader stops at 64 levels: no key reached yet): nothing to name.
      if (doc && typeof doc === "object" && !Array.isArray(doc) && Object.keys(doc).length > 0 && !why.includes("configuration is not valid JSON")) {
        const names = new Set([...keysOf(doc), ...knownKeys]);
        expect([...names].some((k) => why.includes(k.slice(0, 64))), `refusal names no key: ${why.slice(0, 300)}`).toBe(true);
      }
    } else {
      counts.accepted++;
      const s = h.stream({ method: "POST", path: "/v1/chat/completions", cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json" } });
      s.sendRequestHeaders(false);
      s.sendRequestBody('{"model":"m","messages":[{"role":"user","content":"hi"}]}', true);
      for (let i = 0; i < 50 && h.redisCalls.length > 0; i++) h.redisCalls[0].reply(saneReply(scriptCall(h.redisCalls[0])));
      for (const c of [...h.httpCalls]) c.respond({ status: 200, body: "" });
      h.advance(3000);
      expect(failed()).toBeNull();
      const o = outcome(s);
      expect(o.forwarded || (o.localStatus !== null && o.localStatus < 500), JSON.stringify(o)).toBe(true);
    }
    const lines = h.logMessages("trace");
    const logs = lines.join("\n");
    for (const p of [...passwords(doc), ...secretsIn(doc)]) {
      if (p.length >= 4) expect(logs.includes(p), `secret ${p.slice(0, 40)} printed`).toBe(false);
    }
    for (const l of lines) {
      expect(l.length, `log line of ${l.length} characters: ${l.slice(0, 200)}`).toBeLessThan(2048);
      expect(/[\r\n]/.test(l), `log line split: ${JSON.stringify(l.slice(0, 200))}`).toBe(false);
    }
  } finally {
    h.close();
  }
}

describe("fuzz: configurations through the release .wasm", () => {
  it("random and mutated configurations: accepted or refused naming a key, never a trap, never the password", async () => {
    expect(bases.length).toBeGreaterThan(3);
    const counts = { refused: 0, accepted: 0 };
    await fc.assert(fc.asyncProperty(mutatedConfig(bases as never), (text) => checkConfiguration(text, counts)), { seed: FUZZ_SEED, numRuns: runs(300) });
    expect(counts.refused).toBeGreaterThan(20);
    expect(counts.accepted).toBeGreaterThan(20);
  }, FUZZ_TIMEOUT_MS);

  it("hostile configurations (gjson's odd forms, repeated keys, huge numbers, odd characters, deep nesting, 1 MB values, secrets in header keys): same properties", async () => {
    const counts = { refused: 0, accepted: 0 };
    await fc.assert(fc.asyncProperty(hostileConfig([...bases, withSecrets] as never), (text) => checkConfiguration(text, counts)), { seed: FUZZ_SEED, numRuns: runs(300) });
    expect(counts.refused).toBeGreaterThan(20);
    expect(counts.accepted).toBeGreaterThan(20);
  }, FUZZ_TIMEOUT_MS);
});
