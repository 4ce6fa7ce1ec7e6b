// Generic gauge reader for `metric_policy: least | most` with a user-chosen `target_metric`.
// Input: a metrics body, the exact metric name, and optionally a model name (series carrying a
// different `model_name` label are ignored; series without that label count).
// Output: the sum of the value over all matching series (engines, models), NaN when none exists.
// Failure behaviour: never throws; NaN samples are skipped so one bad series does not hide the rest.

import { PromSample, SampleVisitor, forEachSampleIn } from "./prometheus";
import { utf8Encode } from "../util/utf8";

export const MODEL_NAME_LABEL = "model_name";

class GaugeSum extends SampleVisitor {
  sum: f64 = 0;
  seen: bool = false;

  constructor(public name: string, public modelFilter: string) {
    super();
  }

  wantedNames(): string[] | null {
    return [this.name];
  }

  wants(sample: PromSample): bool {
    return sample.nameIs(this.name);
  }

  visit(sample: PromSample): void {
    if (isNaN(sample.value)) return;
    if (this.modelFilter.length > 0 && !sample.labelIsOrMissing(MODEL_NAME_LABEL, this.modelFilter)) return;
    this.sum += sample.value;
    this.seen = true;
  }
}

export function readGauge(text: string, name: string, modelFilter: string = "", complete: bool = false): f64 {
  return readGaugeIn(utf8Encode(text), name, modelFilter, complete);
}

/** readGauge over the body's UTF-8 bytes, scanned in place (`complete`: as parseEngineMetricsIn). */
export function readGaugeIn(bytes: Uint8Array, name: string, modelFilter: string = "", complete: bool = false): f64 {
  const reader = new GaugeSum(name, modelFilter);
  forEachSampleIn(bytes, reader, complete);
  return reader.seen ? reader.sum : NaN;
}
