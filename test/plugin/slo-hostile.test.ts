// predicted_latency through the real wasm on a client's hostile numbers: `max_tokens` of 1e999
// (JSON's number grammar allows it; it parses as Infinity) once made every latency score infinite
// and the choice trapped the VM (a remainder by an empty tie list): every later request on that
// worker failed. Host facade, real Redis.
import { describe, expect, it } from "vitest";
import { postChat, useRedisHost } from "./harness.js";
import { LOOSE, taughtHost } from "./slo-prompts.js";

const t = useRedisHost();

const body = (maxTokens: string) => `{"model":"m","max_tokens":${maxTokens},"messages":[{"role":"user","content":"hello"}]}`;

describe("hostile numbers in the request", () => {
  for (const n of ["1e999", "-1e999", "1e308", "0"]) {
    it(`max_tokens ${n}: routed, the VM alive for the next request (without and with an SLO)`, async () => {
      const h = await taughtHost(t, {});
      for (const headers of [{}, LOOSE]) {
        const { s } = postChat(h, body(n), headers);
        await h.redisIdle();
        expect(h.plugin.vms[0].failed).toBe(false);
        expect(s.forwarded?.upstream.address).toMatch(/^10\.0\.0\.\d:8000$/);
        s.complete();
        await h.redisIdle();
        const next = postChat(h).s;
        await h.redisIdle();
        expect(next.forwarded?.upstream.address).toMatch(/^10\.0\.0\.\d:8000$/);
        next.complete();
        await h.redisIdle();
      }
    });
  }
});
