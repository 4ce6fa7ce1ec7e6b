// Every script of lua/ on a Redis Cluster node, called as the plugin calls it on Redis 7 (FCALL
// of the function library), with the keys the plugin builds (assembly/services/lease/pool.ts,
// queue/admission.ts, predicted_latency/store.ts and replica_records.ts, prefix/keys.ts): all in
// the pool's hash tag. A function, unlike an EVAL script without a shebang (Redis 7's
// compatibility mode), is refused when it touches a key of another slot, declared in KEYS or
// not, so this catches a script that builds a key itself or a key the plugin names outside the
// tag. The first test shows this node does refuse such a call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startClusterNode, type ClusterNode } from "../prefix/cluster-node.js";
import { Pool, callScriptsVia, hostList, loadLibrary, runScript, type ScriptName } from "./pool.js";

let node: ClusterNode;
beforeAll(async () => {
  node = await startClusterNode();
  await loadLibrary(node.redis);
  callScriptsVia("fcall");
});
afterAll(async () => { callScriptsVia("evalsha"); await node?.stop(); });

const run = (name: ScriptName, keys: string[], args: Array<string | number>) => runScript(node.redis, name, keys, args);

describe("Redis Cluster: every script keeps to its pool's slot", () => {
  it("this node refuses a function that touches an undeclared key of another slot", async () => {
    await node.redis.call("FUNCTION", "LOAD", "REPLACE",
      "#!lua name=llmlb_canary\nredis.register_function('llmlb_canary', function(keys, args) return redis.call('GET', args[1]) end)");
    expect(await node.redis.fcall("llmlb_canary", 1, "{t}a", "{t}b")).toBeNull();
    await expect(node.redis.fcall("llmlb_canary", 1, "{t}a", "other")).rejects.toThrow(/same slot/);
  });

  it("lease scripts: acquire, sync, charge, prefix, prefix_write, score, renew, release, reconcile, inspect", async () => {
    const pool = new Pool(node.redis, "route-1", "outbound|8000||vllm.default.svc.cluster.local");
    const hosts = hostList(3);
    const head = (id: string, leaseTtlMs = 60_000) => [id, 1, leaseTtlMs, 60_000, 0, 7, 600_000];
    expect(await run("acquire", pool.keys(), [...head("a"), hosts.length, ...hosts])).toEqual(expect.arrayContaining(["OK"]));
    expect(await run("sync", [...pool.keys("big"), pool.stagingKey("big", "vm1")], [60_000, 1_200_000, 0, 1, ...hosts])).toBe(3);
    expect((await run("charge", pool.keys(), [...head("c"), hosts[1], 0]) as string[])[0]).toBe("OK");
    const levels = [`${pool.ns}:p:0123456789abcdef:${"A".repeat(40)}`, `${pool.ns}:p:0123456789abcdef:${"B".repeat(40)}`];
    expect((await run("prefix", [...pool.keys(), ...levels], [...head("p"), 60, 2, 1.5, 0, 0]) as string[])[0]).toBe("OK");
    expect(await run("prefix_write", levels, [hosts[2], 60])).toBe(2);
    expect((await run("score", pool.keys(), [...head("s", 100), 2, hosts[0], 1, hosts[1], 2, 0]) as string[])[0]).toBe("OK");
    expect(await run("renew", pool.keys().slice(0, 3), [60_000, "a", "c"])).toBe(2);
    expect(await run("renew", pool.keys().slice(0, 3), [60_000, "+", "p", hosts[0], 1, "lost", hosts[1], 1])).toBe(2);
    expect(await run("release", pool.keys().slice(0, 3), ["c", 2, 60_000, 1_200_000])).toBe(1);
    expect(await run("release", pool.keys().slice(0, 3), ["never", 0, 0, 1_200_000, 60_000])).toBe(0);
    await new Promise((r) => setTimeout(r, 400)); // "s" (100 ms) died: the healer settles and collects it
    expect(await run("reconcile", pool.keys().slice(0, 3), [250])).toEqual([1, 1, 0]);
    expect(await run("inspect", [pool.loadKey], hosts)).toHaveLength(6);
  });

  it("predicted_latency's model and records, and the admission queue", async () => {
    const ns = "{llmlb:route-2:outbound|8000||vllm.static}";
    expect(await run("model", [`${ns}:lat`, `${ns}:lat:at`], [60_000, 3_600_000, "10.0.0.1:8000|p", 0.9, 2, 7, 1, 4])).toBe(1);
    expect(await run("records", [`${ns}:rec`, `${ns}:rec:at`], [60_000, 64, 1, "vm1", 0, "r"])).toHaveLength(1);
    const q = [`${ns}:q`, `${ns}:qhb`, `${ns}:qt`, `${ns}:adm`];
    expect(await run("queue", q, ["enter", "e1", 1, "t", 1, 5000, 60_000])).toEqual(["ADMITTED"]);
    expect(await run("queue", q, ["enter", "e2", 1, "t", 1, 5000, 60_000])).toEqual(["QUEUED", "0"]);
    expect(await run("queue", q, ["exit", "e1", 1, 5000])).toEqual([1, "e2"]);
    expect(await run("queue", q, ["renew", 60_000, "e2"])).toBe(1);
    expect(await run("queue", q, ["depth"])).toEqual([0, 1]);
  });
});
