// predicted_latency's prefill interference (sloInterference, on by default with tpot_fit): a long
// prompt's prefill stalls every stream decoding on its pod, so among pods of one speed it goes
// where no open stream would miss its TPOT SLO for it. Through the host facade with a real Redis
// and a manual clock: two pods predicted alike (modelRidge pulls both to the fleet's model),
// taught that a 1,000-token prompt takes 100 ms more than a short one. One pod decodes a stream
// whose first message the long prompt shares (fewer tokens to prefill there: the lowest TTFT);
// with a TPOT SLO of 16 ms that stream has 90 ms of slack (10 ms predicted, 15 gaps), less than
// the long prompt's prefill there. A request without an SLO weighs the harm only among the pods
// within 10% of its lowest predicted latency.
import { describe, expect, it } from "vitest";
import { CHAT_BODY, postChat, useRedisHost } from "./harness.js";
import type { TestHost, TestStream } from "../../host-test/facade/index.js";
import { finish, start } from "./slo-streams.js";
import { followUp, LOOSE, longBody, longText, serve, taughtHost as taught } from "./slo-prompts.js";

const t = useRedisHost();
const taughtHost = (extra: Record<string, unknown>, pods = 2) => taught(t, extra, pods);

const TIGHT = { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "16" };

/**
 * One pod (X) decodes a stream with `headers` whose prompt's first message is also a long prompt's
 * (so the long prompt has fewer tokens to prefill on X, and the lowest TTFT there); the other pod
 * (Y) is idle. Returns X, Y and where the long prompt goes, with its debug header.
 */
async function longPromptBeside(h: TestHost, headers: Record<string, string>, probe: { headers: Record<string, string>; shared: boolean } = { headers: LOOSE, shared: true }): Promise<{ x: string; y: string; to: string; debug: string }> {
  const prefix = longText(1000);
  const { s: open } = postChat(h, JSON.stringify({ model: "m", messages: [{ role: "user", content: prefix }], max_tokens: 16 }), headers);
  await h.redisIdle();
  start(open);
  const x = open.forwarded!.upstream.address!;
  const y = ["10.0.0.1:8000", "10.0.0.2:8000"].find((p) => p !== x)!;
  const { s } = postChat(h, probe.shared ? followUp(prefix) : longBody(2000), probe.headers);
  await h.redisIdle();
  start(s);
  return { x, y, to: s.forwarded!.upstream.address!, debug: String(s.response.headers["x-llmlb-debug"] ?? "") };
}

describe("prefill interference (sloInterference)", () => {
  it("sends a long prompt away from a pod where its prefill would make a stream miss its TPOT SLO", async () => {
    const h = await taughtHost({});
    const { y, to, debug } = await longPromptBeside(h, TIGHT);
    expect(to).toBe(y);
    expect(debug).toMatch(/slo_tpot_fit:.*:harm=0/);
    expect(h.metric("llmlb_slo_interference_avoided_total")).toBe(1);
  });

  it("without a stream to harm the lowest TTFT decides: the pod holding the prompt's first message", async () => {
    const h = await taughtHost({});
    const { x, to, debug } = await longPromptBeside(h, LOOSE);
    expect(to).toBe(x);
    expect(debug).toMatch(/:harm=0/);
    expect(h.metric("llmlb_slo_interference_avoided_total")).toBe(0);
  });

  it("a request without an SLO gives up a little latency (10%) to harm no stream", async () => {
    const h = await taughtHost({});
    // A fresh long prompt: about as fast on either pod, the harm decides.
    const fresh = await longPromptBeside(h, TIGHT, { headers: {}, shared: false });
    expect(fresh.to).toBe(fresh.y);
    expect(fresh.debug).toMatch(/lowest_latency:.*:harm=0/);
  });

  it("...but not more: one sharing the first message of X's stream would be ~20% slower on Y, so X", async () => {
    const h = await taughtHost({});
    const follow = await longPromptBeside(h, TIGHT, { headers: {}, shared: true });
    expect(follow.to).toBe(follow.x);
    expect(follow.debug).toMatch(/lowest_latency:.*:harm=1/);
  });

  it("sloInterference false: the lowest TTFT alone, whatever it does to the stream there", async () => {
    const h = await taughtHost({ sloInterference: false });
    const { x, to, debug } = await longPromptBeside(h, TIGHT);
    expect(to).toBe(x);
    expect(debug).not.toMatch(/harm=/);
    expect(h.metric("llmlb_slo_interference_avoided_total")).toBe(0);
  });
});

// Late binding (sloHoldMs) adds a choice: a request whose prefill would make the streams on its pod
// miss their TPOT SLO may wait at the gateway for them, while its own TTFT SLO leaves room
// (sloInterferenceHold, the share of that SLO it keeps in hand; 0.33 by default).
describe("holding a prefill for other streams' TPOT (sloInterferenceHold)", () => {
  const LATE = { modelBatchSlots: 4, sloHoldMs: 2000 };
  const CHUNK = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\n';
  const slo = (ttft: number) => ({ "x-slo-ttft-ms": String(ttft), "x-slo-tpot-ms": "1000" });

  /** One pod, decoding a stream of 64 tokens with a TPOT SLO of 11 ms: on pace (10 ms a token) it
   *  has 63 ms of slack, less than a 1,000-token prefill there (~100 ms). */
  async function decoding(extra: Record<string, unknown> = {}, teachMore?: (h: TestHost) => Promise<void>): Promise<{ h: TestHost; open: TestStream }> {
    const h = await taughtHost({ ...LATE, ...extra }, 1);
    if (teachMore) await teachMore(h);
    const { s: open } = postChat(h, JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi there" }], max_tokens: 64 }), { "x-slo-ttft-ms": "5000", "x-slo-tpot-ms": "11" });
    await h.redisIdle();
    start(open);
    return { h, open };
  }

  /** `ms` of time, the open stream on pace (a token every 10 ms), until `done` says stop. */
  async function onPace(h: TestHost, open: TestStream, ms: number, done: () => boolean = () => false): Promise<number> {
    let t = 0;
    while (t < ms && !done()) {
      h.advance(10);
      t += 10;
      open.sendResponseBody(CHUNK, false);
      await h.redisIdle();
    }
    return t;
  }

  it("holds a long prompt with room in its TTFT SLO while its prefill would make the stream there miss its TPOT SLO, and sends it once that stream ends", async () => {
    const { h, open } = await decoding();
    const { s } = postChat(h, longBody(1000), slo(5000));
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    expect(h.metric("llmlb_slo_held")).toBe(1);
    expect(h.metric("llmlb_slo_interference_held_total")).toBe(1);
    await onPace(h, open, 50);
    expect(s.forwarded).toBeNull();
    finish(open);
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
    start(s);
    expect(String(s.response.headers["x-llmlb-debug"])).toMatch(/slo_tpot_fit:.*:harm=0\.0:held=/);
    expect(h.metric("llmlb_slo_held")).toBe(0);
  });

  /** A 1,000-token prompt with TTFT SLO `ttftMs` beside the stream on pace: held at first, then
   *  sent within 400 ms; how long it waited (ms, by 10). */
  async function heldThenSent(h: TestHost, open: TestStream, ttftMs: number): Promise<{ s: TestStream; waited: number }> {
    const { s } = postChat(h, longBody(1000), slo(ttftMs));
    await h.redisIdle();
    expect(s.forwarded).toBeNull();
    const waited = await onPace(h, open, 400, () => s.forwarded !== null);
    expect(s.forwarded).not.toBeNull();
    return { s, waited };
  }

  it("keeps the share of its TTFT SLO in hand: goes, harm and all, once its predicted TTFT would leave less", async () => {
    const { h, open } = await decoding();
    // TTFT SLO 400 ms, predicted ~120 ms: a third of 400 in hand leaves ~150 ms to wait.
    const { s, waited } = await heldThenSent(h, open, 400);
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(waited).toBeLessThanOrEqual(200);
    start(s);
    expect(String(s.response.headers["x-llmlb-debug"])).toMatch(/:harm=1\.0:held=/);
  });

  it("never past sloHoldMs", async () => {
    const { h, open } = await decoding({ sloHoldMs: 100 });
    const { waited } = await heldThenSent(h, open, 5000);
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(waited).toBeLessThanOrEqual(120);
  });

  /** A 1,000-token prompt with TTFT SLO `ttftMs` beside the stream: sent at once, harm and all. */
  async function sentAtOnceHarming(h: TestHost, ttftMs: number): Promise<void> {
    const { s } = postChat(h, longBody(1000), slo(ttftMs));
    await h.redisIdle();
    expect(s.forwarded).not.toBeNull();
    start(s);
    expect(String(s.response.headers["x-llmlb-debug"])).toMatch(/:harm=1\.0/);
    expect(h.metric("llmlb_slo_interference_held_total")).toBe(0);
  }

  it("goes at once when its TTFT SLO leaves less than that share to wait", async () => {
    await sentAtOnceHarming((await decoding()).h, 170);
  });

  it("sloInterferenceHold 0: never held for that", async () => {
    await sentAtOnceHarming((await decoding({ sloInterferenceHold: 0 })).h, 5000);
  });

  it("counts the prefills picked ahead of it on the pod, not started yet: they stall the same streams first", async () => {
    // Taught too: a short prompt sent right behind a 1,000-token one waits for its prefill (120 ms).
    const behindLong = async (h: TestHost) => {
      for (let i = 0; i < 6; i++) {
        const { s: long } = postChat(h, longBody(1000), LOOSE);
        await h.redisIdle();
        const { s: short } = postChat(h, CHAT_BODY, LOOSE);
        await h.redisIdle();
        await serve(h, long, 120);
        start(short);
        h.advance(10);
        finish(short);
        await h.redisIdle();
      }
    };
    const { h } = await decoding({ sloInterferenceHold: 0 }, behindLong);
    // A 500-token prefill alone stalls the stream ~50 ms, within its 63 ms of slack...
    const { s: first } = postChat(h, longBody(500), slo(5000));
    await h.redisIdle();
    expect(first.forwarded).not.toBeNull();
    start(first);
    expect(String(first.response.headers["x-llmlb-debug"])).toMatch(/:harm=0\.0/);
    // ...a second one right behind a first not started yet stalls it ~100 ms: it would miss.
    const { s: a } = postChat(h, longBody(500), slo(5000));
    await h.redisIdle();
    const { s: b } = postChat(h, longBody(500), slo(5000));
    await h.redisIdle();
    start(a);
    start(b);
    expect(String(a.response.headers["x-llmlb-debug"])).toMatch(/:harm=0\.0/);
    expect(String(b.response.headers["x-llmlb-debug"])).toMatch(/:harm=1\.0/);
  });
});
