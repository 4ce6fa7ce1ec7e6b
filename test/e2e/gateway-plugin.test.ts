// End to end: the real `openai` client -> the local gateway running the built plugin -> simulated
// vLLM pods, with a real Redis. The upstream that served a request names itself in `x-sim-pod`,
// so "the request reached the pod the plugin chose" is checked by the pod's own answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, MODEL_CLUSTER, ROUTE_NAME, type LocalStack } from "../../host-test/local-stack.js";

let stack: LocalStack;
let redis: Redis;
const LOAD_KEY = `{llmlb:${ROUTE_NAME}:${MODEL_CLUSTER}}:load`;

beforeAll(async () => {
  stack = await startLocalStack({
    pods: 3,
    workers: 2,
    fleet: { profile: "tiny", timeScale: 1 },
    plugin: (port) => ({
      lb_policy: "global_least_request",
      // pickDeadlineMs: a starved parallel phase once took more than the default 50 ms for the first
      // pick's FCALL -> EVALSHA -> EVAL (a fallback, and with breakerFailures 1 an open breaker);
      // the outage below refuses connections at once, it never waits for the deadline.
      lb_config: { ...redisLbConfig(port), debugHeader: "x-llmlb-debug", leaseTTL: 5, breakerFailures: 1, breakerOpenSeconds: 1, pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS },
      _rules_: [{ _match_domain_: ["localhost"], lb_policy: "header", lb_config: { header: "x-llmlb-endpoint" } }],
    }),
  });
  redis = new Redis(stack.redis.url);
  redis.on("error", () => {}); // the outage tests stop Redis on purpose
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

const gw = () => stack.gateways[0];
const client = (headers: Record<string, string> = {}, host = "127.0.0.1") =>
  new OpenAI({ apiKey: "none", baseURL: `${gw().url.replace("127.0.0.1", host)}/v1`, defaultHeaders: headers, maxRetries: 0 });
const address = (i: number) => `${stack.fleet.pods[i].host}:${stack.fleet.pods[i].port}`;

async function totalLoad(): Promise<number> {
  const flat = await redis.zrange(LOAD_KEY, 0, -1, "WITHSCORES");
  let sum = 0;
  for (let i = 1; i < flat.length; i += 2) sum += Number(flat[i]);
  return sum;
}

/** Polls `check` for up to `ms` (15 s: a loaded two-core machine); the error names `detail()`. */
async function eventually(check: () => Promise<boolean>, detail: () => Promise<string> = async () => "", ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not reached in ${ms} ms ${await detail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("through the gateway with the openai client", () => {
  it("non-streaming: answered by the pod the plugin chose", async () => {
    const { data, response } = await client().chat.completions
      .create({ model: "sim-tiny", messages: [{ role: "user", content: "hello there" }], max_tokens: 5 })
      .withResponse();
    expect(data.choices[0].message.content?.split(" ").length).toBe(5);
    const debug = response.headers.get("x-llmlb-debug")!;
    const chosen = debug.match(/host=([^;]+)/)![1];
    const servedBy = response.headers.get("x-sim-pod")!;
    expect(address(Number(servedBy.replace("pod-", "")))).toBe(chosen);
    expect(debug).toContain("reason=least_request");
  });

  it("streaming: chunks arrive, usage included, counts return to 0", async () => {
    const stream = await client().chat.completions.create({
      model: "sim-tiny", messages: [{ role: "user", content: "stream please" }], max_tokens: 12, stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.trim().split(/\s+/).length).toBe(12);
    expect(usage?.completion_tokens).toBe(12);
    await eventually(async () => (await totalLoad()) === 0);
  });

  it("the header test policy routes to the named pod (verified by the pod itself)", async () => {
    for (const i of [2, 0, 1]) {
      // :authority "localhost:<port>" matches the rule's _match_domain_.
      const { response } = await client({ "x-llmlb-endpoint": address(i) }, "localhost").chat.completions
        .create({ model: "sim-tiny", messages: [{ role: "user", content: "pin me" }], max_tokens: 2 })
        .withResponse();
      expect(response.headers.get("x-sim-pod")).toBe(`pod-${i}`);
    }
  });

  it("a bodiless GET through the plugin route does not hang", async () => {
    const started = Date.now();
    const models = await client().models.list();
    expect(models.data.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a client abort mid-stream releases the lease exactly once", async () => {
    const ctrl = new AbortController();
    const ended = gw().stats.endings.get("client_abort") ?? 0;
    const stream = await client().chat.completions.create(
      { model: "sim-tiny", messages: [{ role: "user", content: "long answer" }], max_tokens: 3000, stream: true },
      { signal: ctrl.signal },
    );
    let chunks = 0;
    let sawLoad = -1;
    try {
      for await (const _ of stream) {
        // Leave the loop at once: once in a full CI run (2 cores) this test hung to its 30 s
        // timeout, the cause not seen (the stream's 3,000 tokens take ~3 s); awaiting the
        // iterator after the abort is one place it can wait for a read that never ends.
        if (++chunks === 3) { sawLoad = await totalLoad(); ctrl.abort(); break; }
      }
    } catch {
      // the SDK may surface the abort as an error or just end the iteration
    }
    expect(chunks).toBe(3);
    expect(sawLoad).toBe(1);
    const state = async () => `(endings ${JSON.stringify([...gw().stats.endings])}, load ${await totalLoad()})`;
    await eventually(async () => (gw().stats.endings.get("client_abort") ?? 0) === ended + 1, state);
    await eventually(async () => (await totalLoad()) === 0, state);
    await new Promise((r) => setTimeout(r, 200));
    expect(gw().stats.endings.get("client_abort")).toBe(ended + 1);
    expect(await totalLoad()).toBe(0); // never negative: released once
  });

  it("a Redis outage leaves requests served by the per-gateway fallback, and routing resumes", async () => {
    await stack.redis.stop();
    for (let i = 0; i < 4; i++) {
      const { response } = await client().chat.completions
        .create({ model: "sim-tiny", messages: [{ role: "user", content: `outage ${i}` }], max_tokens: 2 })
        .withResponse();
      expect(response.status).toBe(200);
      expect(response.headers.get("x-llmlb-debug")).toContain("reason=local_fallback");
    }
    await stack.redis.start();
    await redis.ping();
    await eventually(async () => {
      await new Promise((r) => setTimeout(r, 1100)); // the breaker's open window
      const { response } = await client().chat.completions
        .create({ model: "sim-tiny", messages: [{ role: "user", content: "back" }], max_tokens: 2 })
        .withResponse();
      return (response.headers.get("x-llmlb-debug") ?? "").includes("reason=least_request");
    });
  });
});
