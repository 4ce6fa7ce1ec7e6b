// A StreamPort that passes every call to the stream's own port; a policy that needs to reinterpret
// one report (e.g. "picked h" as "write a cluster header") extends it and overrides that method.
import { StreamPort } from "../services/request/request";
import { Verdict } from "../services/request/verdict";

export class ForwardingPort extends StreamPort {
  constructor(protected inner: StreamPort) { super(); }
  alive(): bool { return this.inner.alive(); }
  enterAsync(): bool { return this.inner.enterAsync(); }
  finishAsync(v: Verdict): void { this.inner.finishAsync(v); }
  resumeWith(h: string, reason: string, load: string): void { this.inner.resumeWith(h, reason, load); }
  resumePass(): void { this.inner.resumePass(); }
  resumeShed(load: string): void { this.inner.resumeShed(load); }
  shed(load: string): void { this.inner.shed(load); }
  admitted(): void { this.inner.admitted(); }
}
