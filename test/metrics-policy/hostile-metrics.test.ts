// endpoint_metrics on engines' numbers that once trapped the VM: a weighted score over a queue of
// +Inf (Prometheus allows it; `1e999` parses the same) was NaN on every host, no host was the
// best, and the pick indexed an empty list. Host facade, metrics from health-check bodies.
import { afterEach, describe, expect, it } from "vitest";
import type { TestHost } from "../../host-test/facade/index.js";
import { A, B, chat, makeHost, metricsConfig, picked } from "./harness.js";

let h: TestHost | null = null;
afterEach(() => { h?.close(); h = null; });

const body = (waiting: string, kv = "0.1") =>
  "# TYPE vllm:num_requests_waiting gauge\n" +
  `vllm:num_requests_waiting{engine="0",model_name="m"} ${waiting}\n` +
  `vllm:num_requests_running{engine="0",model_name="m"} 1\n` +
  `vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${kv}\n`;

describe("endpoint_metrics on hostile engine numbers", () => {
  for (const [name, cfg] of [["weighted", { scoring: "weighted" }], ["weighted, queueLimit 0", { scoring: "weighted", queueLimit: 0 }], ["filter tree", {}]] as const) {
    for (const inf of ["+Inf", "1e999", "NaN", "-Inf"]) {
      it(`${name}: a queue of ${inf} on one pod: no trap, requests routed`, async () => {
        h = await makeHost(metricsConfig(cfg), [{ address: A, metrics: body(inf) }, { address: B, metrics: body("9") }]);
        for (let i = 0; i < 4; i++) {
          const s = chat(h);
          expect(h.plugin.vms[0].failed).toBe(false);
          expect([A, B, null]).toContain(picked(s));
          expect(s.forwarded !== null || (s.localResponse?.status ?? 500) < 500).toBe(true);
          s.complete();
        }
      });
    }
  }

  // Every pod reporting an infinite queue (+Inf, or finite series whose sum overflows), or series
  // of +Inf and -Inf (a NaN sum): the filter tree's bands had no finite width, kept no pod, and a
  // request of normal priority was shed as if it were sheddable (429 no_capacity_for_sheddable).
  for (const [name, waiting] of [
    ["+Inf", "+Inf"],
    ["1e308 on two engines", '1e308\nvllm:num_requests_waiting{engine="1",model_name="m"} 1e308'],
    ["+Inf and -Inf on two engines", '+Inf\nvllm:num_requests_waiting{engine="1",model_name="m"} -Inf'],
  ] as const) {
    for (const [tree, cfg] of [["filter tree", {}], ["filter tree, queueLimit 0", { queueLimit: 0 }]] as const) {
      it(`${tree}: every pod with a queue of ${name}: a normal request is placed, not shed`, async () => {
        h = await makeHost(metricsConfig(cfg), [{ address: A, metrics: body(waiting) }, { address: B, metrics: body(waiting) }]);
        const seen = new Set<string | null>();
        for (let i = 0; i < 4; i++) {
          const s = chat(h);
          expect(s.localResponse).toBeNull();
          seen.add(picked(s));
          s.complete();
        }
        expect([...seen].every((x) => x === A || x === B)).toBe(true);
      });
    }
  }
});
