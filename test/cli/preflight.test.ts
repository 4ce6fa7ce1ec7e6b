// `npm run gateway` says what is missing around it: Redis not listening, pods failing their health
// check (with the simulator command when they are consecutive loopback ports), and the model name
// the live pods serve.
import { afterAll, expect, it } from "vitest";
import { preflight, preflightReport } from "../../host-test/cli/preflight.js";
import { localGatewayConfig } from "../../host-test/local-stack.js";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { startSimFleet, type SimFleet } from "../../host-test/sim/fleet.js";
import { freePort } from "../helpers/ports.js";

let fleet: SimFleet;
let gw: Gateway;
afterAll(async () => { await gw?.close(); await fleet?.close(); });

it("names the missing Redis and pods, and the served model", async () => {
  fleet = await startSimFleet(1, { profile: "tiny", modelName: "sim-x" });
  const redisPort = await freePort();
  const deadPort = await freePort();
  const cfg = localGatewayConfig({ endpoints: [`127.0.0.1:${fleet.pods[0].port}`, `127.0.0.1:${deadPort}`], redisPort, plugin: null, healthCheckMs: 1000, adminPort: null });
  gw = await startGateway(cfg);
  const p = await preflight(cfg, gw.health);
  expect(p.models).toEqual(["sim-x"]);
  expect(p.problems).toHaveLength(2);
  const redis = p.problems.find((m) => m.startsWith("Redis"))!;
  expect(redis).toContain(`Redis at 127.0.0.1:${redisPort} (cluster outbound|${redisPort}||redis.static) is not reachable`);
  expect(redis).toContain(`redis-server --port ${redisPort}`);
  const pods = p.problems.find((m) => m.startsWith("pods"))!;
  expect(pods).toContain(`pods 127.0.0.1:${deadPort} (cluster outbound|8000||vllm.static) failed the /metrics health check`);
  expect(pods).toContain(`--pods 1 --base-port ${deadPort}`);
  const report = preflightReport(p);
  expect(report.filter((l) => l.startsWith("missing: "))).toHaveLength(2);
  expect(report.at(-1)).toBe('pods serve model "sim-x": send it as "model" in requests');
}, 30_000);
