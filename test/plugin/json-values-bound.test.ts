// A body of millions of tiny JSON values once exhausted a VM's memory under Envoy's 1 GiB cap
// (the host enforces it: host-test/abi/memory-limit.ts): `{"messages":[0,0,0,...]}` of 24 MiB,
// with maxBodyBytes raised to 32 MiB, parsed into a tape of 16 bytes a value and a materialised
// element per value, and the VM aborted. Past 4 Mi values (json/parse.ts JSON_MAX_ENTRIES) a body
// is not JSON to the plugin, and the request goes on as any body it cannot read.
import { describe, expect, it } from "vitest";
import { glrConfig, host, postChat } from "./harness.js";

describe("a body of millions of JSON values", () => {
  for (const [name, extra] of [["global_least_request, token costs", { costMode: "tokens" }], ["prefix_cache", null]] as const) {
    it(`${name}: no trap, the request is forwarded`, async () => {
      const base = glrConfig({ maxBodyBytes: 33554432, ...(extra ?? {}) }) as { lb_policy: string; lb_config: object };
      const configuration = extra === null ? { ...base, lb_policy: "prefix_cache" } : base;
      const h = await host({ configuration });
      try {
        const body = '{"model":"m","messages":[' + "0,".repeat(12 * 1024 * 1024) + "0]}";
        const { s } = postChat(h, body);
        for (let i = 0; i < 20 && !s.forwarded && !s.localResponse; i++) { h.advance(100); await new Promise((r) => setTimeout(r, 5)); }
        expect(h.plugin.vms[0].failed, h.plugin.vms[0].failureReason ?? "").toBe(false);
        expect(s.forwarded !== null || (s.localResponse?.status ?? 500) < 500).toBe(true);
        s.complete();
      } finally {
        h.close();
      }
    }, 60_000);
  }
});
