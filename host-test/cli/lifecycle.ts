// Clean shutdown for the command-line tools (npm start, npm run gateway, the simulated fleet):
// the given stop() runs once on SIGINT, SIGTERM or SIGHUP, and when a launcher above this process
// dies (parent death). `npm start` runs npm -> sh -> tsx -> node; a SIGKILL of npm (or of tsx)
// leaves the rest running with no one to forward a signal, so the process watches its launchers:
// the chain of node/sh/dash ancestors up to and including the first npm/npx process (Linux
// /proc; elsewhere only the direct parent is watched, through process.ppid).
// Failure behaviour: a second signal, or a stop() that takes longer than FORCE_EXIT_MS, exits at
// once with status 1; stop()'s error is printed and the exit status is 1.
import fs from "node:fs";

const FORCE_EXIT_MS = 10_000;
const WATCH_EVERY_MS = 500;
const LAUNCHER_COMM = /^(node|sh|dash|tsx)$/;
const OUTERMOST_COMM = /^(npm|npx)( |$)/;

interface ProcStat { comm: string; ppid: number; startTime: string }

/** /proc/<pid>/stat: "pid (comm) state ppid ... starttime(22nd field)"; comm may contain spaces or ')'. */
export function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const rest = text.slice(close + 2).split(" ");
  // rest[0] is field 3 (state): ppid is field 4, starttime field 22.
  return { comm: text.slice(open + 1, close), ppid: Number(rest[1]), startTime: rest[19] };
}

export interface Launcher { pid: number; comm: string; startTime: string }

/** The launcher processes above `pid` whose death should stop it (nearest first). */
export function launcherChain(pid = process.pid): Launcher[] {
  const chain: Launcher[] = [];
  let stat = readProcStat(pid);
  while (stat && stat.ppid > 1 && chain.length < 16) {
    const parentPid = stat.ppid;
    const parent = readProcStat(parentPid);
    if (!parent) break;
    const outermost = OUTERMOST_COMM.test(parent.comm);
    // The direct parent is always watched (whoever started us); higher up only launcher layers.
    if (chain.length > 0 && !outermost && !LAUNCHER_COMM.test(parent.comm)) break;
    chain.push({ pid: parentPid, comm: parent.comm, startTime: parent.startTime });
    if (outermost) break;
    stat = parent;
  }
  return chain;
}

function alive(l: Launcher): boolean {
  const now = readProcStat(l.pid);
  return now !== null && now.startTime === l.startTime; // a reused pid has another start time
}

export interface ShutdownOptions {
  /** Printed (stderr) when a launcher dies. */
  log?: (line: string) => void;
}

/** Runs stop() once on SIGINT/SIGTERM/SIGHUP or launcher death, then exits. */
export function stopOnExitSignals(stop: () => Promise<void>, o: ShutdownOptions = {}): { shutdown(code?: number): Promise<never> } {
  const log = o.log ?? ((line: string) => process.stderr.write(line + "\n"));
  let stopping = false;
  const originalPpid = process.ppid;
  const chain = fs.existsSync("/proc/self/stat") ? launcherChain() : [];
  const shutdown = async (code = 0): Promise<never> => {
    if (stopping) process.exit(1);
    stopping = true;
    clearInterval(watch);
    setTimeout(() => process.exit(1), FORCE_EXIT_MS).unref();
    try {
      await stop();
    } catch (e) {
      log(`shutdown: ${(e as Error).message}`);
      code = 1;
    }
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(0));
  const watch = setInterval(() => {
    const gone = process.ppid !== originalPpid ? `parent ${originalPpid}` : chain.filter((l) => !alive(l)).map((l) => `${l.comm} ${l.pid}`)[0];
    if (gone) {
      log(`launcher ${gone} exited: stopping`);
      void shutdown(0);
    }
  }, WATCH_EVERY_MS);
  watch.unref();
  return { shutdown };
}
