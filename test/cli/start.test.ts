// `npm start --no-demo` as a user runs it (npm exec -> tsx -> node, its own process group): README's
// curl commands, read from README.md, work against it as written (only the port is the free one
// the test chose); and however it is stopped — Ctrl-C to the job, SIGTERM to npm, npm killed
// outright — nothing it started (tsx, node, redis-server) is left running.
import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startRedis, type RedisFixture } from "../helpers/redis.js";
import { freePort } from "../helpers/ports.js";
import { descendants, startCli, waitUntilGone, type CliProcess } from "./cli-process.js";

const run = promisify(execFile);
const README_PORT = "localhost:10000";

/** Every `curl` command in README's ```sh blocks, continuation lines joined. */
function readmeCurlCommands(readme: string): string[] {
  const commands: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1].replace(/\\\n\s*/g, "").split("\n")) {
      const cmd = line.replace(/\s+#.*$/, "").trim();
      if (cmd.startsWith("curl ")) commands.push(cmd);
    }
  }
  return commands;
}

async function curl(cmd: string, port: number): Promise<{ status: number; text: string }> {
  const { stdout } = await run("bash", ["-c", `${cmd.replaceAll(README_PORT, `127.0.0.1:${port}`)} -w '\\nHTTP_STATUS=%{http_code}\\n'`]);
  const m = /HTTP_STATUS=(\d+)\n$/.exec(stdout);
  return { status: m ? Number(m[1]) : 0, text: stdout };
}

const header = (text: string, name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(text)?.[1].trim() ?? null;

async function startStack(env?: NodeJS.ProcessEnv): Promise<{ cli: CliProcess; port: number }> {
  const port = await freePort();
  const cli = startCli(["host-test/cli/start.ts", "--no-demo", "--port", String(port)], env);
  await cli.waitFor(/running at http/, 60_000);
  return { cli, port };
}

describe("npm start --no-demo", () => {
  const started: CliProcess[] = [];
  afterAll(() => {
    for (const c of started) if (c.child.exitCode === null) try { process.kill(-c.child.pid!, "SIGKILL"); } catch { /* gone */ }
  });

  it("answers README's curl commands as written, then stops everything on Ctrl-C", async () => {
    const commands = readmeCurlCommands(fs.readFileSync("README.md", "utf8"));
    expect(commands.length).toBeGreaterThanOrEqual(2);
    const { cli, port } = await startStack();
    started.push(cli);
    expect(cli.output()).toContain("starting redis-server");
    expect(cli.output()).toContain(`gateway    http://127.0.0.1:${port}`);
    for (const cmd of commands) {
      expect(cmd, "README's examples go to the port npm start prints").toContain(README_PORT);
      const r = await curl(cmd, port);
      expect(r.status, `${cmd}\n${r.text}`).toBe(200);
      if (cmd.includes("/chat/completions") && cmd.includes("-D -")) {
        expect(header(r.text, "x-sim-pod")).toMatch(/^pod-\d$/);
        expect(header(r.text, "x-llmlb-debug")).toMatch(/reason=/);
      }
    }
    // README: "Send the first command twice: ... the second one lands on the same pod (reason=prefix_hit)."
    const first = commands.find((c) => c.includes("/chat/completions") && c.includes("-D -"))!;
    const a = await curl(first, port);
    const b = await curl(first, port);
    expect(header(b.text, "x-sim-pod")).toBe(header(a.text, "x-sim-pod"));
    expect(header(b.text, "x-llmlb-debug")).toContain("reason=prefix_hit");

    // The admin address it prints serves the plugin's stats in Prometheus text (what the dashboard reads).
    const admin = /admin +(http:\/\/\S+\/stats\/prometheus)/.exec(cli.output())![1];
    const stats = await (await fetch(admin)).text();
    expect(Number(/^llmlb_picks_redis_total (\d+)$/m.exec(stats)?.[1])).toBeGreaterThanOrEqual(commands.length);

    const below = descendants(cli.child.pid!);
    expect(below.map((p) => p.comm)).toContain("redis-server");
    process.kill(-cli.child.pid!, "SIGINT"); // Ctrl-C reaches the whole job
    await cli.exited;
    expect(await waitUntilGone(below, 15_000)).toEqual([]);
  }, 120_000);

  describe("with REDIS_URL", () => {
    let redis: RedisFixture;
    afterAll(async () => { if (redis?.owned) await redis.stop(); });

    it("uses that server (does not say it starts one) and stops on SIGTERM to npm", async () => {
      redis = await startRedis();
      const { cli } = await startStack({ ...process.env, REDIS_URL: redis.url });
      started.push(cli);
      expect(cli.output()).not.toContain("starting redis-server");
      expect(cli.output()).toContain(`Redis at REDIS_URL (${redis.url})`);
      const below = descendants(cli.child.pid!);
      expect(below.map((p) => p.comm)).not.toContain("redis-server");
      expect(below.length).toBeGreaterThan(0);
      cli.child.kill("SIGTERM");
      expect(await waitUntilGone(below, 15_000)).toEqual([]);
    }, 120_000);
  });

  it("stops everything when npm itself is killed (SIGKILL: no signal reaches the children)", async () => {
    const { cli } = await startStack();
    started.push(cli);
    const below = descendants(cli.child.pid!);
    expect(below.map((p) => p.comm)).toEqual(expect.arrayContaining(["node", "redis-server"]));
    cli.child.kill("SIGKILL");
    expect(await waitUntilGone(below, 15_000)).toEqual([]);
  }, 120_000);
});
