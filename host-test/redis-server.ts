// A real redis-server child process on a free port (tests, npm start, benchmarks; nothing is faked).
// REDIS_URL points the suite at an existing server instead (then stop()/kill() are refused:
// a test that needs an outage must run against a server it owns).
import { spawn, type ChildProcess, execFileSync } from "node:child_process";
import net from "node:net";
import { isMainThread } from "node:worker_threads";
import { freePort } from "./ports.js";

export interface RedisFixture {
  host: string;
  port: number;
  url: string;
  /** True when this fixture started (and therefore may stop) the server. */
  owned: boolean;
  /** Stops the server (simulates an outage). */
  stop(): Promise<void>;
  /** Starts it again on the same port (after stop()). */
  start(): Promise<void>;
}

function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, host);
      sock.once("connect", () => { sock.destroy(); resolve(); });
      sock.once("error", () => {
        sock.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server on ${host}:${port} did not come up`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

function redisServerBinary(): string | null {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Linux: run the server under `setpriv --pdeathsig KILL`, so it dies with the process that started
 * it even when that process is SIGKILLed (no orphan redis-server). The signal is tied to the
 * forking thread, hence main thread only.
 */
let setprivWorks: boolean | null = null;
function dieWithParent(bin: string, args: string[]): [string, string[]] {
  if (process.platform !== "linux" || !isMainThread) return [bin, args];
  if (setprivWorks === null) {
    try {
      execFileSync("setpriv", ["--pdeathsig", "KILL", "--", "true"], { stdio: "ignore" });
      setprivWorks = true;
    } catch {
      setprivWorks = false;
    }
  }
  return setprivWorks ? ["setpriv", ["--pdeathsig", "KILL", "--", bin, ...args]] : [bin, args];
}

function dockerAvailable(): boolean {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** Without a redis-server binary but with a Docker engine: a throwaway redis:7 container. */
async function startRedisContainer(): Promise<RedisFixture> {
  const host = "127.0.0.1";
  const port = await freePort();
  let id: string | null = null;
  const start = async () => {
    id = execFileSync("docker", ["run", "-d", "--rm", "-p", `${host}:${port}:6379`, "redis:7-alpine", "redis-server", "--save", "", "--appendonly", "no"], { encoding: "utf8" }).trim();
    await waitForPort(host, port, 30_000);
  };
  const stop = async () => {
    if (id) execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
    id = null;
  };
  await start();
  return { host, port, url: `redis://${host}:${port}`, owned: true, stop, start };
}

export async function startRedis(): Promise<RedisFixture> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    const u = new URL(fromEnv);
    const host = u.hostname;
    const port = Number(u.port || 6379);
    const refuse = async () => { throw new Error("REDIS_URL is set: this fixture does not own the server"); };
    return { host, port, url: fromEnv, owned: false, stop: refuse, start: refuse };
  }
  const bin = redisServerBinary();
  if (bin === null) {
    if (dockerAvailable()) return startRedisContainer();
    throw new Error("redis-server not found: install it (apt-get install redis-server), start Docker, or set REDIS_URL");
  }
  const host = "127.0.0.1";
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    const [cmd, args] = dieWithParent(bin, ["--port", String(port), "--bind", host, "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]);
    child = spawn(cmd, args, { stdio: "ignore" });
    await waitForPort(host, port, 10_000);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => { c.once("exit", () => resolve()); c.kill("SIGKILL"); });
  };
  await start();
  return { host, port, url: `redis://${host}:${port}`, owned: true, stop, start };
}
