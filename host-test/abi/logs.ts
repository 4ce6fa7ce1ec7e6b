// Log capture for guests: proxy_log and WASI fd_write land here, per VM and per stream, with a
// level threshold like Envoy's `--component-log-level wasm:<level>`. Failure behaviour: none.
import { LOG_LEVEL_NAMES, type LogLevelName } from "./constants.js";

export interface LogRecord {
  vm: number;
  /** Context the guest was acting on (root or stream context id). */
  contextId: number;
  level: LogLevelName;
  message: string;
}

export class LogSink {
  readonly records: LogRecord[] = [];
  constructor(
    public threshold: LogLevelName = "info",
    private readonly echo: ((r: LogRecord) => void) | null = null,
    private readonly maxRecords = 100_000,
  ) {}

  levelIndex(): number { return LOG_LEVEL_NAMES.indexOf(this.threshold); }

  write(record: LogRecord): void {
    if (LOG_LEVEL_NAMES.indexOf(record.level) < this.levelIndex()) return;
    // Bounded so a long-running gateway cannot grow without limit: oldest records go first.
    if (this.records.length >= this.maxRecords) this.records.splice(0, this.records.length - this.maxRecords + 1);
    this.records.push(record);
    this.echo?.(record);
  }

  /** Records at or above `level` (all when omitted), optionally for one VM/context. */
  query(level?: LogLevelName, filter: { vm?: number; contextId?: number } = {}): LogRecord[] {
    const min = level ? LOG_LEVEL_NAMES.indexOf(level) : 0;
    return this.records.filter((r) =>
      LOG_LEVEL_NAMES.indexOf(r.level) >= min &&
      (filter.vm === undefined || r.vm === filter.vm) &&
      (filter.contextId === undefined || r.contextId === filter.contextId));
  }
}
