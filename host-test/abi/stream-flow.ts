// One direction (request or response) of an HTTP stream as Envoy's filter manager runs it for a
// single Proxy-Wasm filter in front of the router (request) or the downstream codec (response).
// Sources (Envoy include/envoy/http/filter.h status docs; source/common/http/filter_manager.cc
// commonContinue/handleDataIfStopAll; source/extensions/common/wasm/context.cc decodeData):
// - headers Continue: headers pass on now. StopIteration: headers held, data callbacks keep coming
//   and a data Continue releases headers + data. StopAllIteration*: headers held, data is buffered
//   by the filter manager without calling the filter until continue; on continue the headers pass
//   on first, then the filter's data callback runs once on the buffered body.
// - data StopIterationAndBuffer: the chunk is kept and the next callback sees the whole buffered
//   body (body_size = buffered size). StopIterationAndWatermark: kept, next callback sees only its
//   own chunk. StopIterationNoBuffer: the chunk is dropped. Continue: buffered + current pass on.
// - continue (proxy_continue_stream) on a direction that is not paused does nothing and is Ok.
// - Request trailers (HTTP/2; filter_manager.cc decodeTrailers, commonHandleAfterTrailersCallback,
//   commonContinue): the body's last chunk came with end_stream false; the filter gets its trailers
//   callback even while it holds headers or data (only StopAll* holds them unseen, until continue:
//   then its data callback on the held body, end_stream false, and its trailers callback). Continue
//   resumes a stopped filter: headers, held body (end_stream false), then trailers pass on.
//   StopIteration holds them until continue.
// - StopAllIterationAndBuffer / StopIterationAndBuffer over the buffer limit: request -> local
//   413, response -> 500 (Envoy "buffer limit" behaviour); Watermark variants never hit it.
// - Back pressure: data held with a Watermark status (StopIterationAndWatermark, or
//   StopAllIterationAndWatermark) past the buffer limit crosses the high watermark: Envoy stops
//   reading the downstream (readDisable) until the held data drains (below the low watermark,
//   half the limit; here: when it is released). Chunks sent meanwhile reach the filter only then
//   (envoy filter_manager.cc onDecoderFilterAboveWriteBufferHighWatermark; include/envoy/http/
//   filter.h StopIterationAndWatermark). A filter that waits for end of stream while holding
//   more than the limit this way never gets it.
// - Body view (envoy-profile.ts bodyView): from Envoy 1.32 the buffered body a data callback sees
//   includes the current chunk; before (Higress 2.1.x on Envoy 1.27) it is the decoding buffer
//   alone while the filter buffers, and the chunk is appended only after the callback returns.
// Failure behaviour: a callback into a failed VM reports `null`; the owner decides (fail closed).
import { DataAction, HeadersAction, TrailersAction } from "./constants.js";
import type { HeaderMap } from "./header-map.js";

export interface FlowHooks {
  /** Runs the filter's headers callback; returns the converted action, or null if the VM failed. */
  callHeaders(numHeaders: number, endStream: boolean): number | null;
  /** Runs the filter's data callback; returns the converted action, or null if the VM failed. */
  callData(size: number, endStream: boolean): number | null;
  /** Runs the filter's trailers callback (request direction only); as callData. */
  callTrailers?(numTrailers: number): number | null;
  headersOut(headers: HeaderMap, endStream: boolean): void;
  dataOut(chunk: Buffer, endStream: boolean): void;
  /** Trailers pass on: the direction's end of stream. */
  trailersOut?(trailers: HeaderMap): void;
  overLimit(): void;
  vmFailed(): void;
  /** The stream's buffer limit now (one for both directions: Envoy FilterManager::buffer_limit_). */
  bufferLimit(): number;
}

const EMPTY = Buffer.alloc(0);

export class DirectionFlow {
  headers: HeaderMap | null = null;
  headersReleased = false;
  /** End of stream received from the previous hop (the last data, or trailers). */
  endStream = false;
  /** Trailers received (they end the stream; the data before them did not). */
  trailers: HeaderMap | null = null;
  /** Trailers' progress: arrived but not yet seen by the filter (StopAll), held by its
   *  StopIteration, or passed on. */
  trailersState: "none" | "unseen" | "held" | "released" = "none";
  /** End of stream passed on. */
  endReleased = false;
  /** Headers returned some Stop* and have not been continued. */
  headersHeld = false;
  /** StopAllIteration*: data is buffered without calling the filter. */
  stopAll = false;
  stopAllBufferLimited = false;
  /** Data held at this filter (not yet passed on). */
  buffered: Buffer = EMPTY;
  /** Last data status was StopIterationAndBuffer: the next callback sees the whole buffered body. */
  bufferingForFilter = false;
  bufferingLimited = false;
  /** The body the filter sees during a data callback (replaced by proxy_set_buffer_bytes). */
  bodyView: Buffer | null = null;
  inDataCallback = false;
  /** Set once the direction can no longer move (local reply, reset, stream end). */
  closed = false;
  continuesIgnored = 0;
  /** Converted status of the last headers/data callback (null: the filter was not called). */
  lastAction: number | null = null;
  /** Above the high watermark: the downstream is not read; its chunks wait in `backlog`. */
  readDisabled = false;
  private backlog: Array<[Buffer, boolean] | HeaderMap> = [];
  private replaying = false;

  constructor(private readonly hooks: FlowHooks, private readonly bodyViewMode: "1.32" | "pre-1.32" = "1.32") {}

  /** Whether the filter is holding anything (headers or data). */
  get paused(): boolean {
    return this.headersHeld || this.buffered.length > 0 || (this.endStream && !this.endReleased && this.headersReleased);
  }

  /** Whether the data ends the stream (Envoy: complete() && !hasTrailers()). */
  private get dataEnds(): boolean { return this.endStream && this.trailers === null; }

  onHeaders(headers: HeaderMap, endStream: boolean): void {
    if (this.closed) return;
    this.headers = headers;
    this.endStream = endStream;
    const action = this.hooks.callHeaders(headers.count, endStream);
    this.lastAction = action;
    if (action === null) { this.hooks.vmFailed(); return; }
    if (this.closed) return;
    if (action === HeadersAction.Continue || action === HeadersAction.ContinueAndEndStream) {
      this.releaseHeaders(endStream);
      return;
    }
    this.headersHeld = true;
    if (action === HeadersAction.StopAllIterationAndBuffer || action === HeadersAction.StopAllIterationAndWatermark) {
      this.stopAll = true;
      this.stopAllBufferLimited = action === HeadersAction.StopAllIterationAndBuffer;
    }
  }

  onData(chunk: Buffer, endStream: boolean): void {
    if (this.closed || this.endStream) return;
    if (this.readDisabled) { this.backlog.push([chunk, endStream]); return; }
    this.endStream = endStream;
    this.lastAction = null;
    if (this.stopAll) {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      if (this.stopAllBufferLimited && this.buffered.length > this.hooks.bufferLimit()) this.hooks.overLimit();
    } else {
      this.runDataCallback(chunk);
    }
    if (!this.closed && this.buffered.length > this.hooks.bufferLimit()) this.readDisabled = true;
  }

  /** Held data left the filter: read the downstream again and deliver what waited. */
  private resumeReading(): void {
    if (!this.readDisabled || this.replaying) return;
    this.readDisabled = false;
    this.replaying = true;
    try {
      while (this.backlog.length > 0 && !this.readDisabled && !this.closed) {
        const next = this.backlog.shift()!;
        if (Array.isArray(next)) this.onData(next[0], next[1]);
        else this.onTrailers(next);
      }
    } finally {
      this.replaying = false;
    }
  }

  /**
   * Request trailers from the previous hop (after the last data, which had end_stream false):
   * Envoy FilterManager::decodeTrailers calls the filter unless it stopped all iteration; its
   * status goes through commonHandleAfterTrailersCallback. They come over HTTP/2, whose codec
   * decodes them even while the stream is read-disabled (1.27 http2/codec_impl.cc
   * maybeDeferDecodeTrailers defers only under defer_processing_backedup_streams, off by
   * default): they wait only behind chunks still waiting here, to keep the order.
   */
  onTrailers(trailers: HeaderMap): void {
    if (this.closed || this.endStream || !this.hooks.callTrailers) return;
    this.lastAction = null;
    if (this.backlog.length > 0) { this.backlog.push(trailers); return; }
    this.trailers = trailers;
    this.endStream = true;
    this.trailersState = "unseen";
    if (!this.stopAll) this.runTrailersCallback();
  }

  private runTrailersCallback(): void {
    const action = this.hooks.callTrailers!(this.trailers!.count);
    this.lastAction = action;
    if (action === null) { this.hooks.vmFailed(); return; }
    if (this.closed) return;
    this.trailersState = "held";
    // Continue on a stopped filter is commonContinue: what it holds, then the trailers, pass on.
    if (action === TrailersAction.Continue) this.releaseHeld();
  }

  /** proxy_continue_stream for this direction (already deferred until after the callback). */
  continue(): void {
    if (this.closed) return;
    if (this.headersHeld) {
      const fromCurrent = this.stopAll;
      this.headersHeld = false;
      this.stopAll = false;
      const pending = this.buffered;
      this.releaseHeaders(this.dataEnds && pending.length === 0);
      if (!fromCurrent) { this.releaseHeld(); return; }
      // StopAll: the filter itself now sees the buffered body (iterate from the current filter),
      // then its trailers (commonContinue: doData(complete() && !hasTrailers()), doTrailers).
      this.buffered = EMPTY;
      if (pending.length > 0) this.runDataCallback(pending);
      if (this.trailersState === "unseen" && !this.closed) this.runTrailersCallback();
      return;
    }
    if (this.buffered.length > 0 || (this.endStream && !this.endReleased && this.headersReleased)) {
      this.releaseHeld();
      return;
    }
    this.continuesIgnored++;
  }

  /** What the filter holds passes on: headers, data, then trailers it has seen. */
  private releaseHeld(): void {
    this.releaseData();
    if (this.trailersState !== "held" || this.closed) return;
    this.trailersState = "released";
    this.endReleased = true;
    this.hooks.trailersOut!(this.trailers!);
  }

  private runDataCallback(chunk: Buffer): void {
    // pre-1.32: while buffering, the view is the decoding buffer without this chunk.
    const chunkHidden = this.bufferingForFilter && this.bodyViewMode === "pre-1.32";
    const view = this.bufferingForFilter ? (chunkHidden ? this.buffered : Buffer.concat([this.buffered, chunk])) : chunk;
    const priorBuffered = this.bufferingForFilter ? EMPTY : this.buffered;
    this.bodyView = view;
    this.inDataCallback = true;
    const action = this.hooks.callData(view.length, this.dataEnds);
    this.inDataCallback = false;
    this.lastAction = action;
    const viewAfter = this.bodyView ?? EMPTY;
    // The filter manager appends the hidden chunk once the callback has returned.
    const seen = chunkHidden ? Buffer.concat([viewAfter, chunk]) : viewAfter;
    this.bodyView = null;
    if (action === null) { this.hooks.vmFailed(); return; }
    if (this.closed) return;
    switch (action) {
      case DataAction.Continue:
        this.buffered = Buffer.concat([priorBuffered, seen]);
        this.bufferingForFilter = false;
        this.releaseData();
        return;
      case DataAction.StopIterationAndBuffer:
        this.buffered = Buffer.concat([priorBuffered, seen]);
        this.bufferingForFilter = true;
        if (this.buffered.length > this.hooks.bufferLimit()) this.hooks.overLimit();
        return;
      case DataAction.StopIterationAndWatermark:
        this.buffered = Buffer.concat([priorBuffered, seen]);
        this.bufferingForFilter = false;
        return;
      default: // StopIterationNoBuffer: the current chunk is not kept (already-buffered data stays).
        this.buffered = this.bufferingForFilter ? seen : priorBuffered;
        this.bufferingForFilter = false;
        return;
    }
  }

  private releaseHeaders(endStream: boolean): void {
    if (this.headersReleased || !this.headers) return;
    this.headersReleased = true;
    this.headersHeld = false;
    if (endStream) this.endReleased = true;
    this.hooks.headersOut(this.headers, endStream);
  }

  private releaseData(): void {
    const ends = this.dataEnds;
    if (!this.headersReleased) this.releaseHeaders(ends && this.buffered.length === 0);
    const out = this.buffered;
    this.buffered = EMPTY;
    this.bufferingForFilter = false;
    if (this.endReleased) return;
    if (out.length === 0 && !ends) return;
    if (ends) this.endReleased = true;
    this.hooks.dataOut(out, ends);
    this.resumeReading();
  }

  /** Body visible through proxy_get_buffer_bytes outside a data callback (Envoy: the decoding buffer while buffering). */
  visibleBody(): Buffer | null {
    if (this.inDataCallback) return this.bodyView;
    return this.bufferingForFilter ? this.buffered : null;
  }

  replaceVisibleBody(next: Buffer): void {
    if (this.inDataCallback) this.bodyView = next;
    else if (this.bufferingForFilter) this.buffered = next;
  }
}
