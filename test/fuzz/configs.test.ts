// Property-based fuzzing of the plugin configuration through the release .wasm: random JSON and
// mutations of every documented configuration (README, envoy/) plus one holding a password.
// Properties: configure never traps; a refusal logs a message naming a key of the configuration
// (or one the plugin requires); no log line ever shows the password value; an accepted
// configuration serves a request (forwarded or answered < 500).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TestHost } from "../../host-test/facade/index.js";
import { readmeConfigs, wasmPluginConfigs } from "../deploy/doc-configs.js";
import { CLUSTER, FUZZ_SEED, HOSTS, METRICS_CLUSTER, REDIS_CLUSTER, WASM, outcome, runs, FUZZ_TIMEOUT_MS, saneReply, scriptCall } from "./fuzz-host.js";
import { mutatedConfig } from "./arbitraries.js";

const SECRET = "pw-7Qx93Lk2";
const withPassword = { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, username: "lb", password: SECRET, timeout: 200 } };
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

describe("fuzz: configurations through the release .wasm", () => {
  it("random and mutated configurations: accepted or refused naming a key, never a trap, never the password", async () => {
    expect(bases.length).toBeGreaterThan(3);
    let refused = 0;
    let accepted = 0;
    await fc.assert(fc.asyncProperty(mutatedConfig(bases as never), async (text) => {
      const h = await TestHost.create({ wasm: WASM, configuration: text, clusters: { [CLUSTER]: HOSTS.map((address) => ({ address })), [METRICS_CLUSTER]: [] }, redisClusters: [REDIS_CLUSTER], logLevel: "trace" });
      try {
        const failed = () => h.vms.find((v) => v.failed)?.failureReason ?? null;
        expect(failed()).toBeNull();
        let doc: unknown = null;
        try { doc = JSON.parse(text); } catch { /* not JSON: refused without a key to name */ }
        if (!h.configured.every(Boolean)) {
          refused++;
          const why = h.logMessages("warn").join(" | ");
          expect(why, "a refusal says why").not.toBe("");
          if (doc && typeof doc === "object" && !Array.isArray(doc) && Object.keys(doc).length > 0) {
            const names = new Set([...keysOf(doc), ...knownKeys]);
            expect([...names].some((k) => why.includes(k)), `refusal names no key: ${why}`).toBe(true);
          }
        } else {
          accepted++;
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
        const logs = h.logMessages("trace").join("\n");
        for (const p of passwords(doc)) if (p.length >= 4) expect(logs.includes(p), `password value ${p} printed`).toBe(false);
      } finally {
        h.close();
      }
    }), { seed: FUZZ_SEED, numRuns: runs(300) });
    expect(refused).toBeGreaterThan(20);
    expect(accepted).toBeGreaterThan(20);
  }, FUZZ_TIMEOUT_MS);
});
