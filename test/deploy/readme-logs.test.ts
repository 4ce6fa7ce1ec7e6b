// envoy/README.md's "Logs common to every policy" block shows what the built plugin logs: a
// configuration accepted, one refused by name, and Redis missing as an Envoy cluster. Each line of
// the block must be a line the plugin writes in one of these situations (host-test's redis_init on
// a cluster that does not exist is BadArgument, as Envoy's Context::redisInit, envoy-1.27
// source/extensions/common/wasm/context.cc: getThreadLocalCluster == nullptr).
import fs from "node:fs";
import { expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";

const REDIS = { serviceFQDN: "redis.static", servicePort: 6379 };
const CLUSTER = "outbound|6379||redis.static";

async function logsOf(lbConfig: Record<string, unknown>, redisClusters: string[]): Promise<string[]> {
  const h = await TestHost.create({ wasm: "build/ai-load-balancer.wasm", configuration: { lb_policy: "global_least_request", lb_config: lbConfig }, logLevel: "info", redisClusters });
  try {
    return h.logs().map((r) => r.message);
  } finally {
    h.close();
  }
}

function readmeLogBlock(): string[] {
  const text = fs.readFileSync("envoy/README.md", "utf8");
  const m = /## Logs common to every policy\n```\n([\s\S]*?)```/.exec(text);
  if (!m) throw new Error("envoy/README.md has no log block under 'Logs common to every policy'");
  return m[1].split("\n").filter((l) => l !== "");
}

it("every line of envoy/README.md's log block is what the plugin logs (accepted, refused by name, Redis cluster missing)", async () => {
  const written = [
    ...await logsOf(REDIS, [CLUSTER]),
    ...await logsOf({ ...REDIS, maxRequestCount: -3 }, [CLUSTER]),
    ...await logsOf(REDIS, []),
  ];
  const block = readmeLogBlock();
  expect(block.length).toBe(3);
  expect(block.filter((line) => !written.includes(line)), `the plugin wrote:\n${written.join("\n")}`).toEqual([]);
});
