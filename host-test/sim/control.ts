// Failure-injection and metrics-override settings of one simulated pod, and validation of the
// JSON accepted by POST /sim/control:
//   { "errorRate": 0..1, "slowFactor": >0, "resetAfterTokens": K | null,
//     "refuseConnections": bool, "refuseForMs": ms, "metrics": { name: value | null } | null,
//     "reset": true }
// `metrics` merges into the overrides (a null value drops one, null drops all).
// Failure behaviour: parseControlUpdate returns { ok: false, message } naming the bad field.

export interface SimControlState {
  /** Fraction of generation requests answered 500 immediately. */
  errorRate: number;
  /** Multiplies every engine step time (2 = GPU twice as slow). */
  slowFactor: number;
  /** Reset the connection after this many streamed tokens (null = never). */
  resetAfterTokens: number | null;
  /** The listener is closed (new connections are refused); engine state is kept. */
  refusingConnections: boolean;
  /** Metric name -> value replacing what /metrics reports. */
  metricsOverrides: Record<string, number>;
}

export interface SimControl {
  state(): SimControlState;
  setErrorRate(rate: number): void;
  setSlowFactor(factor: number): void;
  setResetAfterTokens(tokens: number | null): void;
  /** Closes the listener (and idle keep-alive sockets); with forMs, reopens after that long. */
  refuseConnections(forMs?: number): Promise<void>;
  acceptConnections(): Promise<void>;
  setMetricsOverrides(overrides: Record<string, number | null> | null): void;
  /** Back to defaults: no errors, speed 1, no resets, no overrides, accepting connections. */
  reset(): Promise<void>;
}

export interface ControlUpdate {
  errorRate?: number;
  slowFactor?: number;
  resetAfterTokens?: number | null;
  refuseConnections?: boolean;
  refuseForMs?: number;
  metrics?: Record<string, number | null> | null;
  reset?: boolean;
}

export type ControlParse = { ok: true; update: ControlUpdate } | { ok: false; message: string };

export function validateErrorRate(rate: unknown): string | null {
  return typeof rate === "number" && rate >= 0 && rate <= 1 ? null : `errorRate must be in [0, 1], got ${JSON.stringify(rate)}`;
}

export function validateSlowFactor(factor: unknown): string | null {
  return typeof factor === "number" && factor > 0 && Number.isFinite(factor) ? null : `slowFactor must be > 0, got ${JSON.stringify(factor)}`;
}

export function validateResetAfterTokens(tokens: unknown): string | null {
  if (tokens === null) return null;
  return typeof tokens === "number" && Number.isInteger(tokens) && tokens >= 0
    ? null
    : `resetAfterTokens must be an integer >= 0 or null, got ${JSON.stringify(tokens)}`;
}

function validateMetrics(metrics: unknown): string | null {
  if (metrics === null) return null;
  if (typeof metrics !== "object" || Array.isArray(metrics)) return "metrics must be an object of name -> number | null";
  for (const [name, value] of Object.entries(metrics as Record<string, unknown>)) {
    if (value !== null && (typeof value !== "number" || !Number.isFinite(value))) return `metrics.${name} must be a finite number or null, got ${JSON.stringify(value)}`;
  }
  return null;
}

export function parseControlUpdate(body: unknown): ControlParse {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, message: "control body must be a JSON object" };
  const b = body as Record<string, unknown>;
  const problems = [
    b.errorRate !== undefined ? validateErrorRate(b.errorRate) : null,
    b.slowFactor !== undefined ? validateSlowFactor(b.slowFactor) : null,
    b.resetAfterTokens !== undefined ? validateResetAfterTokens(b.resetAfterTokens) : null,
    b.metrics !== undefined ? validateMetrics(b.metrics) : null,
    b.refuseConnections !== undefined && typeof b.refuseConnections !== "boolean" ? "refuseConnections must be a boolean" : null,
    b.refuseForMs !== undefined && !(typeof b.refuseForMs === "number" && b.refuseForMs > 0) ? "refuseForMs must be a number > 0" : null,
    b.reset !== undefined && typeof b.reset !== "boolean" ? "reset must be a boolean" : null,
  ].filter((p): p is string => p !== null);
  if (problems.length > 0) return { ok: false, message: problems.join("; ") };
  return { ok: true, update: b as ControlUpdate };
}

/** Applies a validated update through the control methods (reset first, then the fields). */
export async function applyControlUpdate(control: SimControl, update: ControlUpdate): Promise<void> {
  if (update.reset) await control.reset();
  if (update.errorRate !== undefined) control.setErrorRate(update.errorRate);
  if (update.slowFactor !== undefined) control.setSlowFactor(update.slowFactor);
  if (update.resetAfterTokens !== undefined) control.setResetAfterTokens(update.resetAfterTokens);
  if (update.metrics !== undefined) control.setMetricsOverrides(update.metrics);
  if (update.refuseConnections === true || update.refuseForMs !== undefined) await control.refuseConnections(update.refuseForMs);
}
