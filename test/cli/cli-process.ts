// Starts one of the command-line tools as a user would (through npm exec / tsx, in its own process
// group like a shell job), waits for a line of its output, and lists the processes below it
// (Linux /proc), so tests can kill it and check that nothing it started is left running.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { readProcStat } from "../../host-test/cli/lifecycle.js";

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

/**
 * The user's npm: PATH without node_modules/.bin entries (vitest adds them, and a dependency of
 * as-pect installs an old npm 6 there that has no `npm exec`).
 */
function userPath(env: NodeJS.ProcessEnv): string {
  return (env.PATH ?? "").split(path.delimiter).filter((dir) => !dir.includes(`node_modules${path.sep}.bin`)).join(path.delimiter);
}

/** `npm exec -- tsx <args>`: npm -> (sh) -> tsx -> node, the layers `npm start` has. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): CliProcess {
  const child = spawn("npm", ["exec", "--offline", "--", "tsx", ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...env, PATH: userPath(env) } });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => { out += c.toString(); });
  child.stderr!.on("data", (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      return new Promise((resolve, reject) => {
        const poll = () => {
          const m = pattern.exec(out);
          if (m) return resolve(m);
          if (Date.now() > deadline || child.exitCode !== null) return reject(new Error(`no ${pattern} in output:\n${out}`));
          setTimeout(poll, 100);
        };
        poll();
      });
    },
  };
}

/** Every live process below `root` (children, grandchildren, ...). */
export function descendants(root: number): Array<{ pid: number; comm: string }> {
  const children = new Map<number, Array<{ pid: number; comm: string }>>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push({ pid: Number(name), comm: st.comm });
    children.set(st.ppid, list);
  }
  const found: Array<{ pid: number; comm: string }> = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      found.push(c);
      queue.push(c.pid);
    }
  }
  return found;
}

/** The processes of `pids` still alive (zombies count as gone: they hold no resources). */
export function stillRunning(pids: Array<{ pid: number; comm: string }>): Array<{ pid: number; comm: string }> {
  return pids.filter((p) => {
    try {
      const state = fs.readFileSync(`/proc/${p.pid}/stat`, "utf8").split(") ")[1]?.[0];
      return state !== undefined && state !== "Z";
    } catch {
      return false;
    }
  });
}

export async function waitUntilGone(pids: Array<{ pid: number; comm: string }>, timeoutMs: number): Promise<Array<{ pid: number; comm: string }>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = stillRunning(pids);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}
