// The central-picker policies in a virtual run (omniscient bound, direct round robin): no gateway,
// no plugin; the picker (bench/omniscient-picker.ts, bench/picker-proxy.ts) chooses a pod from
// the request body (and headers) and is told of the first token and the end, as bench/picker-proxy.ts
// does; its debug text is the outcome's debug (as the plugin's debug header).
// Failure behaviour: a refused prompt is a 400 outcome; nothing throws.
import type { Picker } from "../picker-proxy.js";
import type { EventClock } from "./event-clock.js";
import type { VirtualOutcome, VirtualRequest } from "./virtual-gateway.js";
import type { VirtualFleet } from "./virtual-fleet.js";

export class VirtualPickerFront {
  private readonly live = new Set<() => void>();

  constructor(private readonly clock: EventClock, private readonly fleet: VirtualFleet, private readonly picker: Picker) {}

  send(req: VirtualRequest, onDone: (o: VirtualOutcome) => void): void {
    const pick = this.picker.pick(req.bodyObject, req.headers ?? []);
    const pod = this.fleet.pods[pick.pod];
    const o: VirtualOutcome = { status: 200, pod: pod.name, error: null, firstTokenMs: null, tokenMs: [], endMs: 0, content: "", promptTokens: req.promptTokens.length, cachedTokens: 0, outputTokens: 0, debug: pick.debug ?? "" };
    const end = (error: string | null, status: number) => {
      this.picker.onEnd?.(pick);
      o.status = status;
      o.error = error;
      o.endMs = this.clock.now();
      onDone(o);
    };
    const sim = this.fleet.submit(pick.pod, req.promptTokens, req.maxTokens);
    if (!sim) { this.clock.after(0, () => end("status 400", 400)); return; }
    const words: string[] = [];
    let aborted = false;
    const abort = () => { aborted = true; sim.abort(); };
    this.live.add(abort);
    sim.on("token", (t) => {
      if (t.index === 0) { o.firstTokenMs = t.atMs; this.picker.onFirstByte?.(pick); }
      o.tokenMs.push(t.atMs);
      words.push(t.text);
    });
    sim.on("done", (r) => {
      this.live.delete(abort);
      o.cachedTokens = r.cachedTokens;
      o.outputTokens = r.outputTokens;
      o.content = words.join(" ");
      const failed = r.finishReason === "abort";
      this.clock.after(0, () => end(failed ? (aborted ? "client_abort" : "upstream_reset") : null, 200));
    });
  }

  abortAll(): void {
    for (const abort of [...this.live]) abort();
  }
}
