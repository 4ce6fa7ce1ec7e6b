// Stream endings through the gateway in both of Envoy's callback orders (audit row 2): HTTP/1
// and HTTP/2 run on_log, on_done, on_delete; HTTP/3 with deferred logging runs on_log last, after
// on_delete. Whatever the order and the ending (completion, upstream 503, client abort before and
// after the pick), each lease is released exactly once: Redis sees one release script call per
// acquire, the in-flight counts return to exactly 0, and the VM never traps.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import { Redis } from "ioredis";
import { startLocalStack, redisLbConfig, SLOW_MACHINE_PICK_DEADLINE_MS, type LocalStack } from "../../host-test/local-stack.js";
import type { EnvoyProfile } from "../../host-test/abi/envoy-profile.js";
import { LIBRARY_TEXT, scriptOf } from "../helpers/script-calls.js";

const CLUSTER = "outbound|8000||vllm.static";
const NS = `{llmlb:llm:${CLUSTER}}`;

function post(url: string, headers: Record<string, string>, maxTokens: number, abortAfterMs: number | null): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(-1));
    });
    req.on("error", () => resolve(-1));
    req.end(JSON.stringify({ model: "sim-tiny", messages: [{ role: "user", content: "hello" }], max_tokens: maxTokens, ignore_eos: true }));
    if (abortAfterMs !== null) setTimeout(() => req.destroy(), abortAfterMs);
  });
}

for (const endOrder of ["log-first", "deferred-log"] as Array<EnvoyProfile["endOrder"]>) {
  describe(`stream endings, ${endOrder} order`, () => {
    let stack: LocalStack;
    let redis: Redis;
    let monitor: Awaited<ReturnType<Redis["monitor"]>>;
    const calls: string[][] = [];
    beforeAll(async () => {
      stack = await startLocalStack({
        pods: 3, workers: 2, healthCheckMs: 200,
        fleet: { profile: "tiny", timeScale: 1, profileOverrides: { stepBaseMs: 5 } },
        plugin: (port) => ({ lb_policy: "global_least_request", lb_config: { ...redisLbConfig(port), pickDeadlineMs: SLOW_MACHINE_PICK_DEADLINE_MS, failurePenalty: 0 } }),
        gatewayOptions: { profile: { endOrder } },
      });
      redis = new Redis(stack.redis.port, stack.redis.host);
      // Ready first: ioredis's ready check (INFO) run after MONITOR started shows up on the monitor
      // connection in the packet of its +OK, before ioredis switched it to monitor mode, and
      // ioredis fails with "Command queue state error".
      await redis.ping();
      await redis.call("FUNCTION", "LOAD", "REPLACE", LIBRARY_TEXT);
      monitor = await redis.monitor();
      monitor.on("monitor", (_t: string, args: string[]) => calls.push(args));
    }, 30_000);
    afterAll(async () => { monitor?.disconnect(); redis?.disconnect(); await stack?.close(); });

    it("every lease is released exactly once and the counts return to 0", async () => {
      const url = stack.gateways[0].url;
      const results = await Promise.all([
        ...Array.from({ length: 6 }, () => post(url, {}, 2, null)),
        ...Array.from({ length: 3 }, () => post(url, { "x-sim-status": "503" }, 2, null)),
        ...Array.from({ length: 3 }, () => post(url, {}, 400, 150)), // aborted mid-stream
        ...Array.from({ length: 2 }, () => post(url, {}, 400, 0)), // aborted at once
      ]);
      expect(results.filter((s) => s === 200)).toHaveLength(6);
      expect(results.filter((s) => s === 503)).toHaveLength(3);
      // The releases reach Redis after the answers (aborted streams' on the gateway's next turns):
      // wait, up to 15 s (a loaded machine), until as many releases as acquires were seen and the load is back to 0.
      const count = (name: string) => calls.filter((a) => scriptOf(a) === name).length;
      const loadSum = async () => (await redis.zrange(`${NS}:load`, 0, -1, "WITHSCORES")).filter((_, i) => i % 2 === 1).map(Number).reduce((a, b) => a + b, 0);
      const settleBy = Date.now() + 15_000;
      while (Date.now() < settleBy && (count("release") < count("acquire") || (await loadSum()) !== 0)) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100)); // a second release of one lease would show by now
      // The library was loaded before (beforeAll), so each script call is one FCALL.
      expect(calls.filter((a) => scriptOf(a) !== null && a[0].toLowerCase() !== "fcall")).toEqual([]);
      const acquires = calls.filter((a) => scriptOf(a) === "acquire").length;
      const releases = calls.filter((a) => scriptOf(a) === "release").length;
      expect(acquires).toBeGreaterThanOrEqual(12);
      expect(releases).toBe(acquires);
      const load = await redis.zrange(`${NS}:load`, 0, -1, "WITHSCORES");
      expect(load.filter((_, i) => i % 2 === 1).map(Number).reduce((a, b) => a + b, 0)).toBe(0);
      expect(await redis.zcard(`${NS}:leases`)).toBe(0);
      expect(stack.gateways[0].vms.map((vm) => vm.failed)).toEqual([false, false]);
    });
  });
}
