// Starts N replicas of the local gateway from one YAML text, either in this process (shares the
// event loop with the load generator and the simulator: cheapest, fine for small runs) or as
// child processes running host-test/cli/gateway.ts (each replica gets its own event loop, so the
// plugin's CPU is not charged to the load generator's clock). Returns their URLs.
// Failure behaviour: rejects if a replica does not report its URL within the start timeout (the
// ones already started are stopped); close() stops everything it started.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseGatewayConfig } from "../host-test/gateway/config.js";
import { startGateway, type Gateway } from "../host-test/gateway/server.js";

export type GatewayMode = "inprocess" | "process";

export interface GatewayReplicas {
  urls: string[];
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const URL_LINE = /gateway listening on (http:\/\/\S+)/;

async function startInProcess(yamlText: string, count: number, repoRoot: string, seed: number): Promise<GatewayReplicas> {
  const gateways: Gateway[] = [];
  const close = async () => { await Promise.all(gateways.map((g) => g.close())); };
  try {
    for (let i = 0; i < count; i++) gateways.push(await startGateway(parseGatewayConfig(yamlText, repoRoot), { lbSeed: seed + i }));
  } catch (e) {
    await close();
    throw e;
  }
  return { urls: gateways.map((g) => g.url), close };
}

function startChild(configFile: string, repoRoot: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "host-test/cli/gateway.ts", "--config", configFile], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => { child.kill(); reject(new Error(`gateway process did not start in ${START_TIMEOUT_MS} ms: ${output}`)); }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = URL_LINE.exec(output);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1] }); }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (c: Buffer) => { output += c.toString(); });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`gateway process exited (${code}): ${output.trim()}`)); });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

async function startProcesses(yamlText: string, count: number, repoRoot: string, workDir: string): Promise<GatewayReplicas> {
  fs.mkdirSync(workDir, { recursive: true });
  const configFile = path.join(workDir, `gateway-${process.pid}-${Date.now()}.yaml`);
  fs.writeFileSync(configFile, yamlText);
  const children: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(children.map(stopChild));
    fs.rmSync(configFile, { force: true });
  };
  try {
    const started = await Promise.allSettled(Array.from({ length: count }, () => startChild(configFile, repoRoot)));
    for (const s of started) if (s.status === "fulfilled") children.push(s.value.child);
    const failure = started.find((s) => s.status === "rejected");
    if (failure) throw (failure as PromiseRejectedResult).reason;
    return { urls: started.map((s) => (s as PromiseFulfilledResult<{ url: string }>).value.url), close };
  } catch (e) {
    await close();
    throw e;
  }
}

export function startGatewayReplicas(
  yamlText: string, count: number, mode: GatewayMode, opts: { repoRoot: string; workDir: string; seed: number },
): Promise<GatewayReplicas> {
  return mode === "inprocess" ? startInProcess(yamlText, count, opts.repoRoot, opts.seed) : startProcesses(yamlText, count, opts.repoRoot, opts.workDir);
}
