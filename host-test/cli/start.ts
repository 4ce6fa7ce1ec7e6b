// npm start: a complete local deployment on loopback — a real redis-server, a simulated vLLM fleet
// and the local gateway running the built plugin — then a short demo load comparing policies.
// Flags: --policy prefix_cache|global_least_request|endpoint_metrics (default prefix_cache),
// --pods N (4), --port P (10000, or a free port when taken), --no-demo, --exit (stop after the demo).
import { startLocalStack, redisLbConfig, type LocalStack } from "../local-stack.js";
import { freePort } from "../ports.js";
import net from "node:net";

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}
const flag = (name: string) => process.argv.includes(name);

const POLICY_EXTRA: Record<string, Record<string, unknown>> = {
  prefix_cache: {},
  global_least_request: { maxRequestCount: 256 },
  endpoint_metrics: { metricsSource: "health_check" },
};

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

async function main(): Promise<void> {
  const policy = arg("--policy", "prefix_cache");
  if (!(policy in POLICY_EXTRA)) throw new Error(`--policy must be one of ${Object.keys(POLICY_EXTRA).join(", ")}`);
  const pods = Number(arg("--pods", "4"));
  const wanted = Number(arg("--port", "10000"));
  const listenPort = (await portFree(wanted)) ? wanted : await freePort();
  console.log(`starting redis-server, ${pods} simulated vLLM pods (llama-8b-h100 profile) and the gateway (${policy})...`);
  const stack: LocalStack = await startLocalStack({
    pods,
    workers: 2,
    listenPort,
    fleet: { profile: "llama-8b-h100", modelName: "sim-llama-8b" },
    healthCheckMs: 1000,
    plugin: (port) => ({ lb_policy: policy, lb_config: { ...redisLbConfig(port), debugHeader: "x-llmlb-debug", ...POLICY_EXTRA[policy] } }),
  });
  const gw = stack.gateways[0];
  const stop = async () => { await stack.close(); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);

  console.log(`
redis      ${stack.redis.url}
pods       ${stack.fleet.pods.map((p) => `${p.name}=${p.url}`).join("  ")}
gateway    ${gw.url}   (plugin: ${policy}, 2 Wasm VMs)
admin      ${gw.adminUrl}/stats/prometheus   ${gw.adminUrl}/clusters

Try it (the pod that served you is in x-sim-pod, the plugin's choice and reason in x-llmlb-debug):
  curl -s ${gw.url}/v1/chat/completions -H 'content-type: application/json' -D - -o /dev/null \\
    -d '{"model":"sim-llama-8b","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hello"}],"max_tokens":16}'
  curl -sN ${gw.url}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"sim-llama-8b","messages":[{"role":"user","content":"stream"}],"max_tokens":8,"stream":true}'
  curl -s ${gw.url}/v1/models
Send the first command twice: with prefix_cache the second turn lands on the same pod (reason=prefix_hit).
`);
  if (!flag("--no-demo")) {
    const { runDemo } = await import("../../bench/demo.js");
    await runDemo({ log: (line: string) => console.log(line) });
  }
  if (flag("--exit")) return stop();
  console.log("running; Ctrl-C to stop");
}

main().catch((e) => {
  console.error(`npm start: ${(e as Error).message}`);
  process.exit(1);
});
