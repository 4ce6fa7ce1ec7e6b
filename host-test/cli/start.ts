// npm start: a complete local deployment on loopback — a real redis-server (or REDIS_URL), a
// simulated vLLM fleet and the local gateway running the built plugin — then a short demo that
// compares the chosen policy with round robin (host-test/cli/demo.ts).
// Flags: --policy prefix_cache|global_least_request|endpoint_metrics (default prefix_cache),
// --pods N (4), --port P (10000, or a free port when taken), --no-demo, --exit (stop after the demo).
// Stops cleanly (gateway, pods, redis-server) on Ctrl-C, SIGTERM, SIGHUP and when npm/tsx above it
// dies (host-test/cli/lifecycle.ts).
import net from "node:net";
import { startLocalStack, type LocalStack } from "../local-stack.js";
import { freePort } from "../ports.js";
import { stopOnExitSignals } from "./lifecycle.js";
import { isStartPolicy, START_POLICIES, startPluginConfig } from "./policies.js";

export const MODEL_NAME = "sim-llama-8b";

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}
const flag = (name: string) => process.argv.includes(name);

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** On a terminal: redraws the demo's view in place; log() lines stay above it. */
function terminal(): { log(line: string): void; redraw?(lines: string[]): void } {
  if (!process.stdout.isTTY) return { log: (line) => console.log(line) };
  let drawn = 0;
  return {
    log(line) { drawn = 0; console.log(line); },
    redraw(lines) {
      const width = process.stdout.columns || 120;
      const text = lines.map((l) => (l.length > width ? l.slice(0, width - 1) : l)).join("\n");
      process.stdout.write(`${drawn > 0 ? `\x1b[${drawn}F\x1b[J` : ""}${text}\n`);
      drawn = lines.length;
    },
  };
}

async function main(): Promise<void> {
  const policy = arg("--policy", "prefix_cache");
  if (!isStartPolicy(policy)) throw new Error(`--policy must be one of ${Object.keys(START_POLICIES).join(", ")}, got "${policy}"`);
  const pods = Number(arg("--pods", "4"));
  if (!Number.isInteger(pods) || pods < 1) throw new Error(`--pods must be an integer >= 1, got "${arg("--pods", "")}"`);
  const wanted = Number(arg("--port", "10000"));
  const listenPort = (await portFree(wanted)) ? wanted : await freePort();
  const redisWord = process.env.REDIS_URL ? `Redis at REDIS_URL (${process.env.REDIS_URL})` : "redis-server";
  console.log(`starting ${redisWord}, ${pods} simulated vLLM pods (llama-8b-h100 profile, model ${MODEL_NAME}) and the gateway (${policy})...`);
  let stack: LocalStack | null = null;
  const { shutdown } = stopOnExitSignals(async () => { await stack?.close(); });
  stack = await startLocalStack({
    pods,
    workers: 2,
    listenPort,
    fleet: { profile: "llama-8b-h100", modelName: MODEL_NAME },
    healthCheckMs: 1000,
    plugin: (port) => startPluginConfig(policy, port),
  });
  const gw = stack.gateways[0];
  console.log(`
redis      ${stack.redis.url}
pods       ${stack.fleet.pods.map((p) => `${p.name}=${p.url}`).join("  ")}
model      ${MODEL_NAME}
gateway    ${gw.url}   (plugin: ${policy}, 2 Wasm VMs)
admin      ${gw.adminUrl}/stats/prometheus   ${gw.adminUrl}/clusters

Try it (-D - prints the response headers: the pod that served you is in x-sim-pod, the plugin's
choice and its reason in x-llmlb-debug):
  curl -sS ${gw.url}/v1/chat/completions -H 'content-type: application/json' -D - \\
    -d '{"model":"${MODEL_NAME}","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hello"}],"max_tokens":16}'
  curl -sSN ${gw.url}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"${MODEL_NAME}","messages":[{"role":"user","content":"stream"}],"max_tokens":8,"stream":true}'
  curl -sS ${gw.url}/v1/models
Send the first command twice: with prefix_cache the second one lands on the same pod (reason=prefix_hit).
`);
  if (!flag("--no-demo")) {
    const { runDemo } = await import("./demo.js");
    await runDemo({ policy, ...terminal() });
  }
  if (flag("--exit")) return void (await shutdown(0));
  console.log(`running at ${gw.url}; Ctrl-C to stop`);
}

main().catch((e) => {
  console.error(`npm start: ${(e as Error).message}`);
  process.exit(1);
});
