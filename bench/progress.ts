// A one-line progress report on stderr for long runs: rewritten in place on a terminal, one line
// every few seconds otherwise (CI logs). Never throws.
import type { LoadProgress } from "./loadgen.js";

const LOG_EVERY_MS = 5000;

export function progressPrinter(label: string, expected: number): { update(p: LoadProgress): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let lastLog = 0;
  let wrote = false;
  return {
    update(p) {
      const pct = expected > 0 ? Math.min(100, (100 * p.done) / expected) : 0;
      const width = 20;
      const filled = Math.round((pct / 100) * width);
      const line = `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${expected} done, ${p.inFlight} in flight, ${p.failed} failed, ${(p.elapsedWallMs / 1000).toFixed(0)} s`;
      if (tty) {
        process.stderr.write(`\r${line}\x1b[K`);
        wrote = true;
      } else if (p.elapsedWallMs - lastLog >= LOG_EVERY_MS) {
        lastLog = p.elapsedWallMs;
        process.stderr.write(line + "\n");
      }
    },
    done() {
      if (tty && wrote) process.stderr.write("\n");
    },
  };
}
