// prefix_cache through the local gateway with real Redis and simulated pods: a conversation stays
// on one pod turn after turn; a hot prefix spills once the load gate triggers and then stays on the
// new pod; an unhealthy holder is replaced and the chain stays usable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, type LocalStack } from "../../host-test/local-stack.js";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({
    pods: 3, workers: 2, healthCheckMs: 200,
    // Slow decode keeps streams open long enough to load a pod.
    fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 10 } },
    plugin: (port) => ({ lb_policy: "prefix_cache", lb_config: { ...redisLbConfig(port), pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS, debugHeader: "x-llmlb-debug", loadGateAbs: 2, loadGateRel: 1.5, leaseTTL: 10 } }),
  });
}, 30_000);
afterAll(async () => { await stack?.close(); });

interface Answer { pod: string; debug: string; text: string }
type Msg = { role: string; content: string };

function chat(messages: Msg[], maxTokens = 3): { done: Promise<Answer>; abort(): void } {
  let req!: http.ClientRequest;
  const done = new Promise<Answer>((resolve, reject) => {
    req = http.request(`${stack.gateways[0].url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => { text += c; });
      res.on("end", () => resolve({ pod: String(res.headers["x-sim-pod"]), debug: String(res.headers["x-llmlb-debug"] ?? ""), text }));
      res.on("error", () => resolve({ pod: String(res.headers["x-sim-pod"]), debug: String(res.headers["x-llmlb-debug"] ?? ""), text }));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "sim-tiny", messages, max_tokens: maxTokens, ignore_eos: true }));
  });
  return { done, abort: () => req.destroy() };
}

describe("prefix_cache through the gateway", () => {
  it("every turn of a conversation lands on the pod that served the previous one", async () => {
    const messages: Msg[] = [{ role: "system", content: "conversation one system prompt" }];
    let pod = "";
    for (let turn = 0; turn < 5; turn++) {
      messages.push({ role: "user", content: `question ${turn}` });
      const a = await chat(messages).done;
      const reply = JSON.parse(a.text).choices[0].message.content as string;
      if (turn === 0) pod = a.pod;
      else expect(a.debug).toContain("reason=prefix_hit");
      expect(a.pod).toBe(pod);
      messages.push({ role: "assistant", content: reply });
    }
  });

  it("a hot prefix spills to another pod once the gate triggers, and then stays there", async () => {
    const hot = { role: "system", content: "the hot shared system prompt" };
    const open = [chat([hot, { role: "user", content: "u0" }], 400)];
    // Load the affinity pod with long streams; a short probe before each shows where the hot
    // prefix goes now: to the holder (prefix_hit) until the gate (load > min + 2 and > 1.5 x min)
    // sends it elsewhere.
    let holder = "";
    let spilled: Answer | null = null;
    for (let i = 1; i < 8 && spilled === null; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const probe = await chat([hot, { role: "user", content: `probe ${i}` }], 1).done;
      if (probe.debug.includes("reason=prefix_spill")) spilled = probe;
      else { holder = probe.pod; open.push(chat([hot, { role: "user", content: `long ${i}` }], 400)); }
    }
    expect(spilled).not.toBeNull();
    expect(spilled!.pod).not.toBe(holder);
    // The new pod took over the path: the next request with the hot prefix goes there too.
    const next = await chat([hot, { role: "user", content: "after the spill" }], 1).done;
    expect(next.pod).toBe(spilled!.pod);
    expect(next.debug).toContain("reason=prefix_hit");
    for (const o of open) o.abort();
    await Promise.all(open.map((o) => o.done.catch(() => null)));
  });

  it("an unhealthy holder is replaced and the new pod holds the conversation from then on", async () => {
    const messages: Msg[] = [{ role: "system", content: "conversation two" }, { role: "user", content: "first" }];
    const a = await chat(messages).done;
    const holder = stack.fleet.pods.find((p) => p.name === a.pod)!;
    holder.control.refuseConnections();
    // Wait until the gateway's health check marks it unhealthy.
    const gw = stack.gateways[0];
    const address = `${holder.host}:${holder.port}`;
    const deadline = Date.now() + 5000;
    while (gw.health.get("outbound|8000||vllm.static")!.snapshot().find((h) => h.address === address)!.health === "Healthy") {
      if (Date.now() > deadline) throw new Error("holder never became unhealthy");
      await new Promise((r) => setTimeout(r, 50));
    }
    messages.push({ role: "assistant", content: "reply" }, { role: "user", content: "second" });
    const b = await chat(messages).done;
    expect(b.pod).not.toBe(a.pod);
    expect(b.debug).not.toContain("reason=prefix_hit");
    messages.push({ role: "assistant", content: "reply 2" }, { role: "user", content: "third" });
    const c = await chat(messages).done;
    expect(c.pod).toBe(b.pod);
    expect(c.debug).toContain("reason=prefix_hit");
    holder.control.acceptConnections();
  });
});
