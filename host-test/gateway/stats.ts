// Gateway counters for the admin server's /stats/prometheus: requests per upstream, active
// streams, stream endings by kind, override outcomes, route re-matches. Failure behaviour: none.

export class GatewayStats {
  downstreamTotal = 0;
  active = 0;
  readonly upstreamRequests = new Map<string, number>();
  readonly endings = new Map<string, number>();
  overrideHonoured = 0;
  overrideRefused = 0;
  routeRecomputed = 0;
  noRoute = 0;

  countUpstream(address: string): void { this.upstreamRequests.set(address, (this.upstreamRequests.get(address) ?? 0) + 1); }
  countEnding(kind: string): void { this.endings.set(kind, (this.endings.get(kind) ?? 0) + 1); }

  prometheus(extra: { refusedWasmCalls: number }): string {
    const lines = [
      "# TYPE gateway_downstream_rq_total counter", `gateway_downstream_rq_total ${this.downstreamTotal}`,
      "# TYPE gateway_downstream_rq_active gauge", `gateway_downstream_rq_active ${this.active}`,
      "# TYPE gateway_upstream_rq_total counter",
      ...[...this.upstreamRequests].map(([a, n]) => `gateway_upstream_rq_total{upstream="${a}"} ${n}`),
      "# TYPE gateway_stream_end_total counter",
      ...[...this.endings].map(([k, n]) => `gateway_stream_end_total{kind="${k}"} ${n}`),
      "# TYPE gateway_override_total counter",
      `gateway_override_total{outcome="honoured"} ${this.overrideHonoured}`,
      `gateway_override_total{outcome="refused"} ${this.overrideRefused}`,
      "# TYPE gateway_route_recomputed_total counter", `gateway_route_recomputed_total ${this.routeRecomputed}`,
      "# TYPE gateway_no_route_total counter", `gateway_no_route_total ${this.noRoute}`,
      "# TYPE gateway_wasm_refused_calls gauge", `gateway_wasm_refused_calls ${extra.refusedWasmCalls}`,
    ];
    return lines.join("\n") + "\n";
  }
}
