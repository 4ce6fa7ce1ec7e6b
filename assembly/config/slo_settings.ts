// predicted_latency settings (lb_config keys). Defaults are documented in README ("predicted_latency").
import { ConfigReader } from "./reader";

export const SLO_KEYS: string[] = ["sloTtftMs", "sloTpotMs", "sloTtftHeader", "sloTpotHeader", "sloPick",
  "sloExploration", "modelDecay", "modelRidge", "modelRefreshMs", "expectedOutputTokens", "modelBatchSlots", "sloQueueMargin", "sloHoldMs", "sloHoldMax", "sloShareWorkers", "sloInterference", "sloInterferenceHold", "sloShareReplicasMs"];

/** The least period of the gateways' record exchange (ms): a Redis call per Envoy and pool at most this often. */
export const MIN_REPLICAS_MS: i64 = 5;

export const SLO_PICK_BEST_FIT = "best_fit";
export const SLO_PICK_MOST_HEADROOM = "most_headroom";
export const SLO_PICK_TPOT_FIT = "tpot_fit";

export class SloSettings {
  /** Route defaults when a request carries no SLO header (0: none). */
  ttftMs: f64 = 0;
  tpotMs: f64 = 0;
  ttftHeader: string = "x-slo-ttft-ms";
  tpotHeader: string = "x-slo-tpot-ms";
  pick: string = SLO_PICK_TPOT_FIT;
  exploration: f64 = 0.01;
  /** Weight the model's old sums keep per observation (forgetting: ~1/(1-d) observations of memory). */
  decay: f64 = 0.995;
  /** Pull of a host's coefficients toward the fleet's, in pseudo-observations. */
  ridge: f64 = 2.0;
  /** How often a VM re-reads the shared model from Redis. */
  refreshMs: i64 = 500;
  /** Output length assumed when the request has no max_tokens (no-SLO latency score). */
  expectedOutputTokens: i64 = 128;
  /** The engines' batch slots (vLLM max_num_seqs): beyond them a request queues (0: unknown). */
  batchSlots: i64 = 0;
  /** Extra weight of the predicted wait for a batch slot when choosing (its spread is about its size). */
  queueMargin: f64 = 2.0;
  /** Late binding: how long a request may wait at the gateway for its pod's free slot (0: off). */
  holdMs: i64 = 0;
  /** Late binding: requests held at once per VM at most (beyond, a request goes as without). */
  holdMax: i64 = 512;
  /** The worker VMs of one Envoy see each other's open streams (shared data), not averages. */
  shareWorkers: bool = true;
  /** tpot_fit: within the band (without an SLO: within 10% of the lowest latency), the pods where
   *  this request's prefill would make the fewest open streams of this Envoy (this VM's and its
   *  sibling workers') miss their TPOT SLO. */
  interference: bool = true;
  /** Late binding with interference: a request whose prefill would make streams on its pod miss
   *  their TPOT SLO is held while its predicted TTFT leaves more than this share of its TTFT SLO
   *  (0: never held for that). */
  interferenceHold: f64 = 0.33;
  /** Every this many ms (0: never) an Envoy exchanges its VMs' records of a pool's open streams,
   *  recent ends and held requests with every other gateway's through Redis (records.lua), so
   *  other gateways' streams are known as a sibling worker's are, not only as counts. */
  replicasMs: i64 = 0;
}

export function parseSloSettings(r: ConfigReader): SloSettings {
  const s = new SloSettings();
  s.ttftMs = r.num("sloTtftMs", 0, 0, 3600000, "milliseconds");
  s.tpotMs = r.num("sloTpotMs", 0, 0, 3600000, "milliseconds");
  // "": no request header carries the SLO (the route's sloTtftMs / sloTpotMs only).
  s.ttftHeader = r.headerName("sloTtftHeader", s.ttftHeader, true);
  s.tpotHeader = r.headerName("sloTpotHeader", s.tpotHeader, true);
  s.pick = r.choice("sloPick", SLO_PICK_TPOT_FIT, [SLO_PICK_TPOT_FIT, SLO_PICK_BEST_FIT, SLO_PICK_MOST_HEADROOM]);
  s.exploration = r.num("sloExploration", 0.01, 0.0, 1.0);
  s.decay = r.num("modelDecay", 0.995, 0.5, 1.0);
  s.ridge = r.num("modelRidge", 2.0, 0.0, 1000000.0);
  s.refreshMs = r.int("modelRefreshMs", 500, 50, 3600000, "milliseconds");
  s.expectedOutputTokens = r.int("expectedOutputTokens", 128, 0, 1000000);
  s.batchSlots = r.int("modelBatchSlots", 0, 0, 1000000);
  s.queueMargin = r.num("sloQueueMargin", 2.0, 0.0, 100.0);
  s.holdMs = r.int("sloHoldMs", 0, 0, 600000, "milliseconds");
  s.holdMax = r.int("sloHoldMax", 512, 1, 100000);
  s.shareWorkers = r.bool("sloShareWorkers", true);
  s.interference = r.bool("sloInterference", true);
  s.interferenceHold = r.num("sloInterferenceHold", 0.33, 0.0, 0.95);
  s.replicasMs = r.int("sloShareReplicasMs", 0, 0, 60000, "milliseconds");
  if (s.replicasMs > 0 && s.replicasMs < MIN_REPLICAS_MS) r.errors.add(r.key("sloShareReplicasMs") + " must be 0 (off) or at least " + MIN_REPLICAS_MS.toString() + " ms");
  // The exchange carries the record sloShareWorkers builds (sibling_streams.ts).
  if (s.replicasMs > 0 && !s.shareWorkers) r.errors.add(r.key("sloShareReplicasMs") + " needs " + r.key("sloShareWorkers"));
  // Holding waits for a pod's free batch slot: without the slots known there is none to wait for.
  if (s.holdMs > 0 && s.batchSlots == 0) r.errors.add(r.key("sloHoldMs") + " needs " + r.key("modelBatchSlots") + " (the engines' batch slots, vLLM max_num_seqs)");
  return s;
}
