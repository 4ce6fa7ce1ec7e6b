// CLI: `tsx host-test/cli/gateway.ts --config <gateway.yaml> [--log]` starts the local gateway
// (listener + admin) and prints their URLs; Ctrl-C stops it. Exit code 1 on a bad config/module.
import { loadGatewayConfig } from "../gateway/config.js";
import { startGateway } from "../gateway/server.js";

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
  console.log(`gateway listening on ${gw.url}`);
  if (gw.adminUrl) console.log(`admin on ${gw.adminUrl} (/stats/prometheus, /ready, /clusters)`);
  const stop = async () => { await gw.close(); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
} catch (e) {
  console.error(`gateway: ${(e as Error).message}`);
  process.exit(1);
}
