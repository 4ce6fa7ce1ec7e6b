// Bench-only AssemblyScript entry (see entry.ts): predicted_latency's per-candidate work on a full
// pod, the wait for a batch slot (open_streams.ts + slot_wait.ts) and the prefill ahead. Input:
// two little-endian i32, the slots S and the open streams N on the pod (S started, N - S not).
import { OpenStream, OpenStreams } from "../../assembly/policy/predicted_latency/open_streams";
import { ResponseTally } from "../../assembly/policy/predicted_latency/response_scan";

let input: Uint8Array = new Uint8Array(0);

export function inputBuffer(len: i32): usize {
  input = new Uint8Array(len);
  return input.dataStart;
}

export function inputReady(): void {}

const HOST = "10.0.0.1:8000";
let slots: i32 = 0;
let n: i32 = 0;

/** The pod the input describes (S slots, N streams of this VM: S started, N - S not), or null. */
function inputPod(): OpenStreams | null {
  if (input.length < 8) return null;
  slots = load<i32>(input.dataStart);
  n = load<i32>(input.dataStart + 4);
  const o = new OpenStreams();
  for (let i = 0; i < n; i++) {
    const s = new OpenStream(HOST, <f64>i, 96, 1000, <f64>n, 0, 50, 50, 8);
    if (i < slots) { s.firstMs = <f64>((i * 37) % 500); s.lastMs = s.firstMs; }
    o.add(s);
  }
  return o;
}

/** One candidate's slot wait computed (the schedule, as when its reuse window passed) + prefill
 *  ahead, `iterations` times, on a pod of S slots and N streams. */
export function slotWaitFull(iterations: i32): i32 {
  const o = inputPod();
  if (o === null) return -1;
  let acc: f64 = 0;
  for (let k = 0; k < iterations; k++) acc += o.computeWait(HOST, n, 0, slots, 8, 50, 128, 600 + <f64>k * 0.001) + o.prefillAhead(HOST);
  return <i32>(acc / <f64>max(iterations, 1));
}

/** The same through waitFor, requests 0.01 ms apart: the wait is reused within WAIT_REUSE_MS. */
export function slotWaitReused(iterations: i32): i32 {
  const o = inputPod();
  if (o === null) return -1;
  let acc: f64 = 0;
  for (let k = 0; k < iterations; k++) {
    const now = 600 + <f64>k * 0.01;
    acc += o.waitFor(HOST, <f64>n, slots, 8, 50, 128, now) + o.prefillAhead(HOST, now);
  }
  return <i32>(acc / <f64>max(iterations, 1));
}

/** Without batch slots: one candidate's overdue wait (a pass over the pod's N streaming requests,
 *  the first S started), `iterations` times. */
export function overdueWait(iterations: i32): i32 {
  const o = inputPod();
  if (o === null) return -1;
  const list = o.lists();
  for (let j = 0; j < list.length; j++) for (let i = 0; i < list[j].length; i++) list[j][i].streaming = true;
  let acc: f64 = 0;
  for (let k = 0; k < iterations; k++) acc += o.overdue(HOST, 600 + <f64>k * 0.001);
  return <i32>(acc / <f64>max(iterations, 1));
}

/** predicted_latency's scan of a response body (the input, as one chunk): its SSE events and the
 *  usage's completion, prompt and cached tokens, `iterations` times. */
export function responseScan(iterations: i32): i32 {
  let acc: i64 = 0;
  for (let k = 0; k < iterations; k++) {
    const t = new ResponseTally();
    t.scan(input);
    acc += t.tokens() + t.cachedTokens;
  }
  return <i32>(acc / <i64>max(iterations, 1));
}
