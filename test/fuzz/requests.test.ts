// Property-based fuzzing of the request path through the release .wasm (host facade, record-mode
// Redis): any body of any API shape, delivered in any chunking, with any ending, and any RESP reply
// to the plugin's Redis calls. Properties: the VM never traps; every request is forwarded (a pick
// or the route's own fallback) or answered locally below 500, never left hanging; every lease the
// plugin acquired is released exactly once when Redis granted it, at most once otherwise.
// Seeded and bounded here; FUZZ_RUNS / FUZZ_SEED (npm run soak) run more.
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { CLUSTER, FUZZ_SEED, FuzzHost, HOSTS, outcome, runs, FUZZ_TIMEOUT_MS, saneReply, type Answer } from "./fuzz-host.js";
import { apiPath, body, chunking, chunks, respReply } from "./arbitraries.js";

const config = { lb_policy: "global_least_request", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, leaseTTL: 5, failurePenalty: 1 } };
const ending = fc.constantFrom("complete", "upstream-500", "abort", "abort-before-pick");
const sane: Answer = (_c, sc) => saneReply(sc);

async function oneRequest(fuzz: FuzzHost, path: string, b: Buffer, cuts: number[], end: string, answer: Answer,
  headers: Record<string, string> = {}): Promise<void> {
  const h = await fuzz.host();
  fuzz.resetLedger();
  const s = h.stream({ method: "POST", path, cluster: CLUSTER, route: "llm", headers: { "content-type": "application/json", ...headers } });
  s.sendRequestHeaders(false);
  const parts = chunks(b, cuts);
  parts.forEach((p, i) => s.sendRequestBody(p, i === parts.length - 1));
  if (end === "abort-before-pick") s.abort();
  fuzz.drain(answer);
  fuzz.advance(2000, answer, 250); // unanswered calls reach their timeout
  expect(fuzz.failure()).toBeNull();
  if (end !== "abort-before-pick") {
    const o = outcome(s);
    expect(o.forwarded || (o.localStatus !== null && o.localStatus < 500), `request neither forwarded nor answered: ${JSON.stringify(o)}`).toBe(true);
    if (end === "abort") s.abort();
    else { s.sendResponseHeaders({ ":status": end === "complete" ? "200" : "500" }, false); s.sendResponseBody("{}", true); s.complete(); }
  }
  fuzz.drain(answer);
  fuzz.advance(2000, answer, 250);
  expect(fuzz.failure()).toBeNull();
  expect(fuzz.leaseViolations()).toEqual([]);
}

describe("fuzz: request bodies through the release .wasm", () => {
  const fuzz = new FuzzHost(config);
  afterAll(() => fuzz.close());
  it("any body, chunking and ending: no trap, forwarded or answered < 500, leases released once", async () => {
    await fc.assert(fc.asyncProperty(apiPath, body, chunking, ending, (path, b, cuts, end) => oneRequest(fuzz, path, b, cuts, end, sane)),
      { seed: FUZZ_SEED, numRuns: runs(400) });
    expect(fuzz.totals.grants).toBeGreaterThan(50); // the bodies reached Redis picks, not only fallbacks
    expect(fuzz.totals.releases).toBeGreaterThanOrEqual(fuzz.totals.grants);
  }, FUZZ_TIMEOUT_MS);
});

/** A model hash as HGETALL returns it: each host ~50 ms to the first token, ~10 ms a token (ten
 *  observations of x = 1), so predicted_latency scores every candidate (the choice is exercised). */
function learnedModel(): string {
  const b = "10 0 0 0 0 0 0 0 0 0 500 0 0 0 25000 10";
  const p = "10 0 0 100 0 1000 10";
  const items = HOSTS.flatMap((h) => [`${h}|b`, b, `${h}|p`, p]);
  return `*${items.length}\r\n` + items.map((s) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`).join("");
}

// The other policies that read the body: prefix_cache (the prefix keys), endpoint_metrics weighted
// with the prefix term and token costs (the output budget in the lease's cost).
const others: Array<[string, object]> = [
  ["prefix_cache", { lb_policy: "prefix_cache", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, leaseTTL: 5 } }],
  ["endpoint_metrics, weighted, token costs", { lb_policy: "endpoint_metrics", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, leaseTTL: 5, scoring: "weighted", prefixWeight: 1, costMode: "tokens" } }],
];
describe.each(others)("fuzz: request bodies through %s", (_name, cfg) => {
  const fuzz = new FuzzHost(cfg);
  afterAll(() => fuzz.close());
  it("any body, chunking and ending: no trap, forwarded or answered < 500, leases released once", async () => {
    await fc.assert(fc.asyncProperty(apiPath, body, chunking, ending, (path, b, cuts, end) => oneRequest(fuzz, path, b, cuts, end, sane)),
      { seed: FUZZ_SEED, numRuns: runs(150) });
  }, FUZZ_TIMEOUT_MS);
});

describe("fuzz: request bodies through predicted_latency with a learned model", () => {
  const pl = { lb_policy: "predicted_latency", lb_config: { serviceFQDN: "redis.static", servicePort: 6379, timeout: 500, leaseTTL: 5, sloExploration: 0, debugHeader: "x-llmlb-debug" } };
  const fuzz = new FuzzHost(pl);
  afterAll(() => fuzz.close());
  const model = learnedModel();
  const answer: Answer = (c, sc) => (c.text.includes("HGETALL") ? model : saneReply(sc));
  const slo = fc.constantFrom<Record<string, string>>({}, { "x-slo-ttft-ms": "500", "x-slo-tpot-ms": "50" });
  it("any body (numbers like max_tokens 1e999 included), with and without an SLO: no trap, forwarded or answered < 500, leases released once", async () => {
    await fc.assert(fc.asyncProperty(body, slo, ending, (b, headers, end) => oneRequest(fuzz, "/v1/chat/completions", b, [], end, answer, headers)),
      { seed: FUZZ_SEED, numRuns: runs(200) });
    expect(fuzz.totals.grants).toBeGreaterThan(20);
  }, FUZZ_TIMEOUT_MS);

  it("random, wrong-shaped and truncated replies to its calls (the model read included): no trap, forwarded or answered < 500", async () => {
    const replies = fc.array(fc.oneof(respReply, fc.constant(model)), { minLength: 1, maxLength: 8 });
    const b = Buffer.from(JSON.stringify({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "hello" }] }));
    await fc.assert(fc.asyncProperty(replies, slo, ending, (rs, headers, end) => {
      let i = 0;
      const random: Answer = (c, sc) => (i < rs.length ? rs[i++] : answer(c, sc));
      return oneRequest(fuzz, "/v1/chat/completions", b, [], end, random, headers);
    }), { seed: FUZZ_SEED, numRuns: runs(300) });
  }, FUZZ_TIMEOUT_MS);
});

describe("fuzz: RESP replies to the plugin's Redis calls", () => {
  const fuzz = new FuzzHost(config);
  afterAll(() => fuzz.close());
  it("random, wrong-shaped and truncated replies: no trap, forwarded or answered < 500, leases released at most once", async () => {
    const replies = fc.array(respReply, { minLength: 1, maxLength: 6 });
    await fc.assert(fc.asyncProperty(replies, ending, (rs, end) => {
      let i = 0;
      const answer: Answer = (_c, sc) => (i < rs.length ? rs[i++] : saneReply(sc));
      const b = Buffer.from(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }] }));
      return oneRequest(fuzz, "/v1/chat/completions", b, [], end, answer);
    }), { seed: FUZZ_SEED, numRuns: runs(600) });
    expect(fuzz.totals.grants).toBeGreaterThan(20);
  }, FUZZ_TIMEOUT_MS);
});
