// The central-picker policies in a virtual run (omniscient reference, direct round robin): no gateway,
// no plugin; the picker (bench/omniscient-picker.ts, bench/picker-proxy.ts) chooses a pod from
// the request body (and headers) and is told of the first token and the end, as bench/picker-proxy.ts
// does; its debug text is the outcome's debug (as the plugin's debug header).
// A HoldingPicker (late binding, bench/slo/slo-late-picker.ts) may instead hold a request: it
// calls `send` once, now or later on the virtual clock, and the request goes to the pod then; the
// outcome's times stay on the one clock, so a client's TTFT includes the hold.
// Failure behaviour: a refused prompt is a 400 outcome; a request still held at abortAll ends as
// client_abort (a later send of it is ignored); nothing throws.
import type { Pick, Picker } from "../picker-proxy.js";
import type { EventClock } from "./event-clock.js";
import { noteSent, type VirtualOutcome, type VirtualRequest } from "./virtual-gateway.js";
import type { VirtualFleet } from "./virtual-fleet.js";

/** A picker that decides when as well as where: `send` exactly once, now or later. */
export interface HoldingPicker {
  route(body: unknown, headers: ReadonlyArray<readonly [string, string]>, send: (pick: Pick) => void): void;
  onFirstByte?(pick: Pick): void;
  onToken?(pick: Pick): void;
  onEnd?(pick: Pick): void;
}

function holds(p: Picker | HoldingPicker): p is HoldingPicker {
  return typeof (p as HoldingPicker).route === "function";
}

export class VirtualPickerFront {
  private readonly live = new Set<() => void>();

  constructor(private readonly clock: EventClock, private readonly fleet: VirtualFleet, private readonly picker: Picker | HoldingPicker) {}

  send(req: VirtualRequest, onDone: (o: VirtualOutcome) => void): void {
    const picker = this.picker;
    if (!holds(picker)) { this.start(req, picker.pick(req.bodyObject, req.headers ?? []), onDone); return; }
    let state: "held" | "sent" | "aborted" = "held";
    const abortHeld = () => {
      state = "aborted";
      this.live.delete(abortHeld);
      const o = this.outcome(req, "", "");
      this.clock.after(0, () => { o.status = 200; o.error = "client_abort"; o.endMs = this.clock.now(); onDone(o); });
    };
    this.live.add(abortHeld);
    picker.route(req.bodyObject, req.headers ?? [], (pick) => {
      if (state !== "held") return;
      state = "sent";
      this.live.delete(abortHeld);
      this.start(req, pick, onDone);
    });
  }

  private outcome(req: VirtualRequest, pod: string, debug: string): VirtualOutcome {
    return { status: 200, pod, error: null, firstTokenMs: null, tokenMs: [], endMs: 0, content: "", promptTokens: req.promptTokens.length, cachedTokens: 0, outputTokens: 0, debug, sentMs: null, podReadyMs: null };
  }

  private start(req: VirtualRequest, pick: Pick, onDone: (o: VirtualOutcome) => void): void {
    const picker = this.picker;
    const pod = this.fleet.pods[pick.pod];
    const o = this.outcome(req, pod.name, pick.debug ?? "");
    const end = (error: string | null, status: number) => {
      picker.onEnd?.(pick);
      o.status = status;
      o.error = error;
      o.endMs = this.clock.now();
      onDone(o);
    };
    const sim = this.fleet.submit(pick.pod, req.promptTokens, req.maxTokens);
    if (!sim) { this.clock.after(0, () => end("status 400", 400)); return; }
    noteSent(o, sim);
    const words: string[] = [];
    let aborted = false;
    const abort = () => { aborted = true; sim.abort(); };
    this.live.add(abort);
    sim.on("token", (t) => {
      if (t.index === 0) { o.firstTokenMs = t.atMs; picker.onFirstByte?.(pick); }
      picker.onToken?.(pick);
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
