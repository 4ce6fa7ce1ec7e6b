// How lb_type: cluster policies hand their choice to Envoy: the chosen service (an Envoy cluster
// name such as outbound|443||llm-a.internal.dns) is written into the configured request header,
// and nothing else. The route must route by that header (Envoy RouteAction.cluster_header; envoy/
// README.md shows the EnvoyFilter). clear_route_cache is deliberately NOT set to "off": Higress's
// Envoy clears the route cache when a Wasm filter changes a request header, and that re-resolution
// is what makes the router read the header (higress-parity.md section 10). No override host is set.
// Failure behaviour: a refused header write returns false (the caller decides), never traps.
import * as host from "../host/calls";
import { LbRequest } from "../services/request/request";

export function writeClusterHeader(r: LbRequest, header: string, service: string, reason: string): bool {
  const st = host.replaceHeader(host.MapType.RequestHeaders, header, service);
  if (st != host.Status.Ok) {
    host.log(host.LogLevel.Error, reason + ": writing " + header + " failed with status " + st.toString());
    return false;
  }
  // For the debug header and logs: the "host" of a cluster policy is the service.
  r.pickedHost = service;
  r.reason = reason;
  if (r.cfg.detailLog) host.log(host.LogLevel.Info, "picked service " + service + " reason=" + reason + " header=" + header);
  return true;
}
