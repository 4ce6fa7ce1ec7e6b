// CLI: `tsx host-test/cli/gateway.ts --config <gateway.yaml> [--log]` starts the local gateway
// (listener + admin), prints their URLs, then says what is missing around it (Redis, pods) and
// which model the pods serve (host-test/cli/preflight.ts). It does not start Redis or pods:
// `npm start` does. Stops on Ctrl-C, SIGTERM, SIGHUP and when its launcher dies.
// Exit code 1 on a bad config/module, 2 on bad usage.
import { loadGatewayConfig } from "../gateway/config.js";
import { startGateway } from "../gateway/server.js";
import { stopOnExitSignals } from "./lifecycle.js";
import { preflight, preflightReport } from "./preflight.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const configPath = arg("--config");
if (!configPath) {
  console.error("usage: gateway --config <gateway.yaml> [--log]");
  process.exit(2);
}
try {
  const cfg = loadGatewayConfig(configPath);
  const echo = process.argv.includes("--log");
  const gw = await startGateway(cfg, {
    logEcho: echo ? (r) => console.log(`[vm${r.vm} ctx${r.contextId}] ${r.level}: ${r.message}`) : undefined,
  });
  stopOnExitSignals(() => gw.close());
  console.log(`gateway listening on ${gw.url}`);
  if (gw.adminUrl) console.log(`admin on ${gw.adminUrl} (/stats/prometheus, /ready, /clusters)`);
  for (const line of preflightReport(await preflight(cfg, gw.health))) console.log(line);
} catch (e) {
  console.error(`gateway: ${(e as Error).message}`);
  process.exit(1);
}
