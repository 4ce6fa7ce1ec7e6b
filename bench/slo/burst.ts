// Overload burst (Photoroom's case), queueing vs shedding: 2 pods (llama-8b-h100, 2 sequences a
// pod), two tenants (A offers 3/4 of the requests, B 1/4), 10 s at ~2x the fleet's capacity, then
// 10 s at ~1/2 so queues drain. Shedding = global_least_request with maxRequestCount 2 (429 when
// every pod is full); queueing = the same with queueCapacity 4 (the fleet's batch slots), waiting
// up to queueMaxWaitMs 15000, fair between tenants by x-tenant. Reports failed requests, wait
// (TTFT) p50/p99 of served requests, and each tenant's served share against the max-min fair share.
// Run: npx tsx bench/slo/burst.ts [--rate R]. Wall ms = simulated ms (timeScale 1).
import http from "node:http";
import { SeededRandom } from "../../host-test/sim/random.js";
import { randomWords } from "../workloads/text.js";
import { startTopology } from "../topology.js";
import { pct, sloRequest } from "./client.js";

const TOPOLOGY = { pods: 2, profile: "llama-8b-h100", profileOverrides: { maxNumSeqs: 2 }, timeScale: 1, seed: 5, gateways: 1 };

const MODES: Record<string, Record<string, unknown>> = {
  shedding: { maxRequestCount: 2 },
  queueing: { queueCapacity: 4, queueMaxWaitMs: 15000, queueTenantHeader: "x-tenant", queuePollMs: 20 },
};

interface Job { at: number; tenant: string; prompt: string }

function jobs(rate: number, seed: number): Job[] {
  const rng = new SeededRandom(seed);
  const out: Job[] = [];
  const stages = [{ rate: 2 * rate, ms: 10_000 }, { rate: rate / 2, ms: 10_000 }];
  let start = 0;
  for (const s of stages) {
    let t = start;
    while (true) {
      t += -Math.log(1 - rng.next()) / s.rate * 1000;
      if (t > start + s.ms) break;
      out.push({ at: t, tenant: rng.next() < 0.75 ? "A" : "B", prompt: randomWords(rng, 200) });
    }
    start += s.ms;
  }
  return out;
}

async function runMode(mode: string, rate: number): Promise<string> {
  const topo = await startTopology(TOPOLOGY, "global_least_request", MODES[mode]);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
    const url = `${topo.urls[0]}/v1/chat/completions`;
    const list = jobs(rate, 3);
    const t0 = performance.now();
    const results = await Promise.all(list.map(async (j) => {
      const wait = j.at - (performance.now() - t0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      return sloRequest(url, { messages: [{ role: "user", content: j.prompt }], max_tokens: 32, ignore_eos: true, stream: true }, { "x-tenant": j.tenant }, agent, 60_000);
    }));
    agent.destroy();
    const served = results.filter((r) => r.status === 200);
    const waits = served.map((r) => r.ttftMs ?? r.e2eMs);
    const by = (t: string) => ({ offered: list.filter((j) => j.tenant === t).length, served: results.filter((r, i) => r.status === 200 && list[i].tenant === t).length });
    const a = by("A"), b = by("B");
    // Max-min fair split of what was served: B (the smaller demand) gets min(its demand, half).
    const total = a.served + b.served;
    const fairB = Math.min(b.offered, total / 2);
    const fairA = total - fairB;
    const dev = Math.max(Math.abs(a.served - fairA) / fairA, Math.abs(b.served - fairB) / fairB);
    return `| ${mode} | ${list.length} | ${list.length - served.length} | ${pct(waits, 0.5).toFixed(0)} / ${pct(waits, 0.99).toFixed(0)} | A ${a.served}/${a.offered}, B ${b.served}/${b.offered} | ${(dev * 100).toFixed(1)}% |`;
  } finally {
    await topo.close();
  }
}

export async function burstMain(args: string[]): Promise<void> {
  const i = args.indexOf("--rate");
  const rate = i >= 0 ? Number(args[i + 1]) : 16;
  console.log("| mode | requests | failed | wait (TTFT) p50 / p99 ms | served / offered per tenant | max deviation from fair share |");
  console.log("|---|---|---|---|---|---|");
  for (const m of Object.keys(MODES)) console.log(await runMode(m, rate));
}

if (process.argv[1]?.endsWith("burst.ts")) burstMain(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
