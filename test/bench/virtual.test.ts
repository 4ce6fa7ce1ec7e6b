// Virtual time (bench/virtual/): the event clock's order, Redis script time following the virtual
// clock (against a real redis-server), and reproducibility: two runs of one seed give identical
// tables (the real .wasm, real Lua scripts on a real Redis, simulated engines).
import { describe, expect, it } from "vitest";
import { useRedisSuite } from "../helpers/redis.js";
import { bundleLuaScripts, embeddedLuaScripts } from "../../scripts/lua-bundle.mjs";
import { encodeCommand } from "../../host-test/resp.js";
import { markdownTable } from "../../bench/report.js";
import { smoke } from "../../bench/scenarios/smoke.js";
import { totalTurns } from "../../bench/workloads/types.js";
import { EventClock } from "../../bench/virtual/event-clock.js";
import { runVirtualScenario } from "../../bench/virtual/run-virtual.js";
import { decodeCommand, VirtualLua } from "../../bench/virtual/virtual-lua.js";

describe("event clock", () => {
  it("runs events by time, ties in scheduling order, and stops at a reservation until it is filled", () => {
    const clock = new EventClock();
    const seen: string[] = [];
    clock.after(5, () => seen.push("b@5"));
    clock.after(1, () => { seen.push("a@1"); clock.after(0, () => seen.push("a2@1")); });
    const slot = clock.reserve(3);
    clock.after(5, () => seen.push("c@5"));
    while (clock.runNext());
    expect(seen).toEqual(["a@1", "a2@1"]);
    expect(clock.nextIsUnfilled()).toBe(true);
    clock.fill(slot, () => seen.push("reply@3"));
    while (clock.runNext());
    expect(seen).toEqual(["a@1", "a2@1", "reply@3", "b@5", "c@5"]);
    expect(clock.now()).toBe(5);
    expect(() => clock.at(4, () => {})).toThrow(/before now/);
  });
});

describe("virtual Lua time", () => {
  const suite = useRedisSuite();

  it("rewrites a production script call so the script's clock is the virtual instant, ARGV unchanged", async () => {
    const lua = new VirtualLua();
    const renew = bundleLuaScripts().renew;
    expect(renew.text).toContain("redis.call('TIME')"); // production reads the Redis clock
    const { redis } = suite;
    // A live lease at the virtual instant, written as acquire's add_lease writes it (lua/lib.lua):
    // record "<host> <cost> <bucket>", index score LEASE_BASE + bucket, the bucket's aggregate.
    // The virtual instant lies in the wall clock's past, so a wall-clock renew would skip it.
    const LEASE_BASE = 2 ** 46;
    const bucketOf = (ms: number) => Math.ceil(ms / 250) * 250;
    const virtualNow = 1_767_225_600_123;
    const b0 = bucketOf(virtualNow + 1000);
    await redis.hset("{t}:lease", "lease-a", `h1 1 ${b0}`, `@${b0} h1`, 1);
    await redis.zadd("{t}:leases", LEASE_BASE + b0, "lease-a", b0, `@${b0} h1`);
    await redis.zadd("{t}:load", 1, "h1");
    const renewedTo = async (at: number) => {
      const b = bucketOf(at + 5000);
      expect(await redis.hget("{t}:lease", "lease-a")).toBe(`h1 1 ${b}`);
      expect(Number(await redis.zscore("{t}:leases", "lease-a"))).toBe(LEASE_BASE + b);
      expect(await redis.hget("{t}:lease", `@${b} h1`)).toBe("1"); // the cost moved bucket
      expect(Number(await redis.zscore("{t}:load", "h1"))).toBe(1); // and stayed on its host
    };
    const query = encodeCommand(["EVALSHA", renew.sha1, 3, "{t}:load", "{t}:leases", "{t}:lease", 5000, "lease-a"]);
    const first = decodeCommand(lua.translate(query, virtualNow))!;
    expect(first[1].toString()).not.toBe(renew.sha1); // the virtual variant's sha, unknown to a fresh Redis
    await expect(redis.call("EVALSHA", ...first.slice(1))).rejects.toThrow(/NOSCRIPT/);
    // The plugin's NOSCRIPT fallback sends the production text: it is swapped for the variant.
    const full = decodeCommand(lua.translate(encodeCommand(["EVAL", renew.text, 3, "{t}:load", "{t}:leases", "{t}:lease", 5000, "lease-a"]), virtualNow))!;
    expect(await redis.call("EVAL", ...full.slice(1))).toBe(1); // one lease renewed: ARGV[2..] was intact
    await renewedTo(virtualNow);
    // Now loaded: EVALSHA of the variant runs, at a later virtual instant.
    const again = decodeCommand(lua.translate(query, virtualNow + 750))!;
    expect(await redis.call("EVALSHA", ...again.slice(1))).toBe(1);
    await renewedTo(virtualNow + 750);
    expect(lua.rewritten).toBe(3);
    const plain = encodeCommand(["GET", "k"]);
    expect(lua.translate(plain, virtualNow)).toBe(plain);
    // A bundle that never reads the clock (the bundler left now_ms out) runs as production sends it.
    const inspect = bundleLuaScripts().inspect;
    expect(inspect.text).not.toMatch(/'TIME'/);
    const call = encodeCommand(["EVALSHA", inspect.sha1, 1, "{t}:load"]);
    expect(lua.translate(call, virtualNow)).toBe(call);
    expect(lua.rewritten).toBe(3);
  });

  it("rewrites the calls the plugin makes: its compacted, embedded texts and their SHA-1s", () => {
    // The plugin embeds compacted bundles (scripts/build.mjs), whose SHA-1s differ from the full
    // texts': a virtual run that knew only the full texts let every plugin call read wall time.
    const lua = new VirtualLua();
    const embedded = Object.entries(embeddedLuaScripts()).filter(([, b]) => b.text.includes("redis.call('TIME')"));
    expect(embedded.map(([name]) => name)).toEqual(expect.arrayContaining(["acquire", "release", "renew", "queue"]));
    for (const [name, b] of embedded) {
      expect(b.sha1, name).not.toBe(bundleLuaScripts()[name].sha1);
      const bySha = decodeCommand(lua.translate(encodeCommand(["EVALSHA", b.sha1, 1, "{t}:load", "x"]), 5_000))!;
      expect(bySha[1].toString(), name).not.toBe(b.sha1);
      expect(bySha.at(-1)!.toString(), name).toBe("5000");
      const byText = decodeCommand(lua.translate(encodeCommand(["EVAL", b.text, 1, "{t}:load", "x"]), 6_000))!;
      expect(byText[1].toString(), name).toContain("__virtual_now_ms");
    }
    expect(lua.rewritten).toBe(2 * embedded.length);
  });

  it("stops a run whose plugin was built from other Lua than lua/: its scripts would read the wall clock", () => {
    const lua = new VirtualLua();
    const stale = "local t = redis.call('TIME')\nreturn t[1] -- an older build's text";
    expect(() => lua.translate(encodeCommand(["EVAL", stale, 0]), 1_000)).toThrow(/build\/ is older than lua\//);
    expect(() => lua.translate(encodeCommand(["FCALL", "llmlb_000000000000_acquire", 0]), 1_000)).toThrow(/npm run build/);
    // Not ours, or not reading the clock: passed as is.
    expect(lua.translate(encodeCommand(["EVAL", "return 1", 0]), 1_000).toString()).toContain("return 1");
    expect(lua.translate(encodeCommand(["FCALL", "other_fn", 0]), 1_000).toString()).toContain("other_fn");
  });

  it("refuses a bundle that reads the clock in a form it cannot replace", async () => {
    const { virtualScriptText, readsTime } = await import("../../bench/virtual/virtual-lua.js");
    const odd = "local t = redis.call(\"TIME\")\nreturn t[1]";
    expect(readsTime(odd)).toBe(true);
    expect(() => virtualScriptText(odd)).toThrow(/no redis.call\('TIME'\) to replace/);
    expect(readsTime("-- redis.call('TIME') only in a comment\nreturn 1")).toBe(false);
  });
});

describe("virtual-time benchmark runs", () => {
  it("two runs with one seed give identical tables; another seed differs", async () => {
    const o = { seed: 7, quiet: true, policies: ["global_least_request", "prefix_cache", "omniscient"] as const };
    const strip = (r: Awaited<ReturnType<typeof runVirtualScenario>>) => ({
      table: markdownTable(r),
      runs: r.runs.map((x) => ({ ...x, loadgen: { ...x.loadgen, wallMs: 0 } })),
    });
    const a = strip(await runVirtualScenario(smoke, { ...o, policies: [...o.policies] }));
    const b = strip(await runVirtualScenario(smoke, { ...o, policies: [...o.policies] }));
    const turns = totalTurns(smoke.workload(7));
    expect(a.runs.every((r) => r.summary && r.summary.failed === 0 && r.summary.succeeded === turns)).toBe(true);
    expect(a.runs[1].loadgen.redisCalls).toBeGreaterThan(turns); // the plugin really went through Redis
    expect(b).toEqual(a);
    const c = strip(await runVirtualScenario(smoke, { ...o, seed: 8, policies: [...o.policies] }));
    expect(c.table).not.toEqual(a.table);
  }, 60_000);
});
