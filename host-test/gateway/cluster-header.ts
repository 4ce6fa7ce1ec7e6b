// Envoy's RouteAction.cluster_header: a route that names its cluster in a request header.
// Envoy reads the header each time the route is resolved (RouteEntryImplBase::clusterEntry builds
// a DynamicRouteEntry from the FIRST value of the header, "" when it is absent; the header is
// untrusted, so only one value counts). The HTTP connection manager resolves the route before the
// filter chain and again after a filter clears the route cache; in Higress's Envoy fork a Wasm
// filter that changes request headers clears it (unless property clear_route_cache is "off";
// higress-abi.md, higress-parity.md section 10), which is how ai-load-balancer's cluster policies
// steer a request: they write the chosen cluster into the header in on_request_headers.
// The router then looks the name up; an unknown (or empty) name is answered with the route's
// cluster_not_found_response_code (503 by default), an empty body, response flag NC and details
// cluster_not_found (Envoy source/common/router/router.cc, Filter::decodeHeaders).
// Docs: https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto
// (RouteAction.cluster_header, RouteAction.cluster_not_found_response_code).
// Failure behaviour: never throws.
import type { HeaderMap } from "../abi/header-map.js";
import type { RouteConfig } from "./config.js";

/** The cluster a route sends this request to: its fixed cluster, or the header's first value. */
export function routeCluster(route: RouteConfig, headers: HeaderMap): string {
  if (route.cluster_header === null) return route.cluster;
  return headers.get(route.cluster_header) ?? "";
}

export const CLUSTER_NOT_FOUND_DETAILS = "cluster_not_found";
