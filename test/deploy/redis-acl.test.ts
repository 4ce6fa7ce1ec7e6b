// envoy/README.md's Redis ACL rule (a user that may run the plugin's scripts on its own keys only)
// is enough for every Redis-backed policy: picks go through Redis (not the per-gateway fallback)
// and the user cannot read a key outside the plugin's prefix.
import fs from "node:fs";
import { Redis } from "ioredis";
import { afterAll, expect, it } from "vitest";
import { localGatewayConfig, redisLbConfig } from "../../host-test/local-stack.js";
import { startGateway } from "../../host-test/gateway/server.js";
import { startSimFleet } from "../../host-test/sim/fleet.js";
import { startRedis } from "../helpers/redis.js";

/** The `ACL SETUSER` line of envoy/README.md, with its password placeholder. */
function readmeAclRule(): string[] {
  const m = /redis-cli ACL SETUSER (llmlb [^\n`]+)/.exec(fs.readFileSync("envoy/README.md", "utf8"));
  if (!m) throw new Error("envoy/README.md has no `redis-cli ACL SETUSER llmlb ...` line");
  return m[1].trim().split(/\s+/).map((w) => w.replace(/^(['"])(.*)\1$/, "$2")); // shell quotes off
}

const POLICIES: Array<[string, Record<string, unknown>, RegExp]> = [
  ["global_least_request", {}, /reason=least_request/],
  ["prefix_cache", {}, /reason=prefix_(miss|hit)/],
  ["endpoint_metrics", { metricsSource: "health_check" }, /reason=endpoint_metrics:(metrics|inflight)/],
  // The records exchange too (lua/records.lua): its hash must be there after the requests.
  ["predicted_latency", { sloShareReplicasMs: 5 }, /reason=predicted_latency:/],
];

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => { for (const c of cleanups.reverse()) await c(); });

it.each(POLICIES)("envoy/README.md's ACL user is enough for %s, and can touch nothing else", async (policy, extra, picked) => {
  const rule = readmeAclRule().map((w) => (w === ">$REDIS_PASSWORD" ? ">s3cret" : w));
  expect(rule).toContain(">s3cret");
  const problems: string[] = [];
  const redis = await startRedis();
  if (redis.owned) cleanups.push(() => redis.stop());
  const admin = new Redis(redis.port, redis.host);
  cleanups.push(async () => { admin.disconnect(); });
  await admin.flushall();
  expect(await admin.call("ACL", "SETUSER", ...rule)).toBe("OK");
  const fleet = await startSimFleet(2, { profile: "tiny" });
  cleanups.push(() => fleet.close());
  const cfg = localGatewayConfig({
    endpoints: fleet.pods.map((p) => `${p.host}:${p.port}`), redisPort: redis.port, workers: 1, adminPort: null, healthCheckMs: 200,
    plugin: { lb_policy: policy, lb_config: { ...redisLbConfig(redis.port), username: "llmlb", password: "s3cret", debugHeader: "x-llmlb-debug",
      // A starved machine (the parallel phase) once took more than the default 50 ms pick deadline for
      // the first pick's FCALL -> EVALSHA -> EVAL: a local fallback that says nothing of the ACL. A
      // command the ACL refused would still fall back, and log a warning.
      pickDeadlineMs: 5000, timeout: 5000, ...extra } },
  });
  const gw = await startGateway(cfg, { logEcho: (r) => { if (["warn", "error", "critical"].includes(r.level)) problems.push(r.message); } });
  cleanups.push(() => gw.close());
  const user = new Redis({ port: redis.port, host: redis.host, username: "llmlb", password: "s3cret", lazyConnect: true, enableReadyCheck: false });
  try {
    const url = gw.url;
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ messages: [{ role: "system", content: "s" }, { role: "user", content: `q${i}` }], max_tokens: 2 }) });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-llmlb-debug") ?? "").toMatch(picked);
      await res.text();
    }
    expect(problems, problems.join("\n")).toEqual([]);
    const keys = await admin.keys("*");
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => !k.startsWith("{llmlb:")), "every key the plugin wrote is under the ACL's pattern").toEqual([]);
    if (policy === "predicted_latency") expect(keys.filter((k) => k.endsWith(":rec") || k.endsWith(":rec:at"))).toHaveLength(2);
    await admin.set("other-app:secret", "x");
    await user.connect();
    await expect(user.get("other-app:secret")).rejects.toThrow(/NOPERM/);
    await expect(user.flushall()).rejects.toThrow(/NOPERM/);
  } finally {
    user.disconnect();
  }
}, 30_000);
