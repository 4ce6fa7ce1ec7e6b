// A one-node Redis Cluster for tests: redis-server with cluster mode on, owning all 16384 slots.
// Real cluster semantics (CLUSTER KEYSLOT, CROSSSLOT refusal of scripts whose keys span slots)
// without a multi-node setup. Failure: throws if redis-server is missing or the cluster does not
// reach state ok within 10 s.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { Redis } from "ioredis";
import { freePort } from "../helpers/ports.js";

export interface ClusterNode {
  redis: Redis;
  stop(): Promise<void>;
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, "127.0.0.1");
      sock.once("connect", () => { sock.destroy(); resolve(true); });
      sock.once("error", () => { sock.destroy(); resolve(false); });
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`redis-server (cluster mode) on port ${port} did not come up`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function startClusterNode(): Promise<ClusterNode> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "llmlb-cluster-"));
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
    "--cluster-config-file", join(dir, "nodes.conf"), "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
  const stop = async () => {
    if (child.exitCode === null) await new Promise<void>((resolve) => { child.once("exit", () => resolve()); child.kill("SIGKILL"); });
    rmSync(dir, { recursive: true, force: true });
  };
  const redis = new Redis(port, "127.0.0.1", { lazyConnect: true });
  try {
    await waitForPort(port, Date.now() + 10_000);
    await redis.connect();
    await redis.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
    const deadline = Date.now() + 10_000;
    while (!String(await redis.call("CLUSTER", "INFO")).includes("cluster_state:ok")) {
      if (Date.now() > deadline) throw new Error("one-node cluster did not reach cluster_state:ok");
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    redis.disconnect();
    await stop();
    throw err;
  }
  return { redis, stop: async () => { redis.disconnect(); await stop(); } };
}
