// What `npm run gateway` needs around it, checked once at start: every Redis cluster's endpoint
// accepts TCP connections, every pod of a static cluster answers (its health check passed, or a
// TCP connect without one), and the model names the pods serve (GET /v1/models), so the user
// knows which "model" to send. Each problem is one line naming the address and how to fix it.
// Failure behaviour: never throws; an unreachable part is a reported problem.
import net from "node:net";
import type { GatewayConfig } from "../gateway/config.js";
import type { HealthChecker } from "../gateway/health.js";

export interface Preflight { problems: string[]; models: string[] }

const CONNECT_TIMEOUT_MS = 1000;

function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(address.slice(i + 1)) };
}

export function tcpReachable(address: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<boolean> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve) => {
    const sock = net.connect({ host, port, timeout: timeoutMs });
    const done = (ok: boolean) => { sock.destroy(); resolve(ok); };
    sock.once("connect", () => done(true));
    sock.once("timeout", () => done(false));
    sock.once("error", () => done(false));
  });
}

async function servedModels(address: string): Promise<string[]> {
  try {
    const res = await fetch(`http://${address}/v1/models`, { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
    if (!res.ok) return [];
    const body = (await res.json()) as { data?: Array<{ id?: unknown }> };
    return (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === "string");
  } catch {
    return [];
  }
}

/** The simulator command that serves these addresses, when they are consecutive loopback ports. */
function simFleetHint(addresses: string[]): string {
  const parts = addresses.map(splitAddress);
  const first = parts[0].port;
  const consecutive = parts.every((a, i) => a.host === "127.0.0.1" && a.port === first + i);
  return consecutive ? ` A simulated fleet there: npx tsx host-test/sim/cli.ts --pods ${parts.length} --base-port ${first} --profile llama-8b-h100 --model sim-llama-8b` : "";
}

export async function preflight(cfg: GatewayConfig, health: ReadonlyMap<string, HealthChecker>): Promise<Preflight> {
  const problems: string[] = [];
  const models = new Set<string>();
  for (const c of cfg.clusters) {
    if (c.type === "redis") {
      for (const ep of c.endpoints) {
        if (await tcpReachable(ep)) continue;
        const { port } = splitAddress(ep);
        problems.push(`Redis at ${ep} (cluster ${c.name}) is not reachable: the plugin falls back to per-gateway picks until it is. Start one: redis-server --port ${port} --save "" --appendonly no`);
      }
    }
    if (c.type !== "static") continue;
    const hc = health.get(c.name)?.snapshot();
    const down: string[] = [];
    for (const ep of c.endpoints) {
      const up = hc ? hc.find((h) => h.address === ep)?.health !== "Unhealthy" : await tcpReachable(ep);
      if (!up) down.push(ep);
      else for (const m of await servedModels(ep)) models.add(m);
    }
    if (down.length > 0) {
      const how = hc ? `failed the ${c.health_check!.path} health check` : "refused the connection";
      problems.push(`pods ${down.join(", ")} (cluster ${c.name}) ${how}: requests routed there get 503 until they answer.${simFleetHint(down)}`);
    }
  }
  return { problems, models: [...models].sort() };
}

export function preflightReport(p: Preflight): string[] {
  const lines = p.problems.map((m) => `missing: ${m}`);
  lines.push(p.models.length > 0 ? `pods serve model ${p.models.map((m) => `"${m}"`).join(", ")}: send it as "model" in requests` : "no pod answered GET /v1/models: the served model name is unknown");
  return lines;
}
