// How one `_rules_` entry matches a request, exactly as Higress's SDK matcher does
// (higress-group/wasm-go pkg/matcher/rule_matcher.go at b573359; line numbers below are that file's).
// Pure functions over three strings Envoy gives the filter: the `route_name` and `cluster_name`
// properties and the `:authority` request header. Every comparison is byte-exact (case-sensitive).

/** Rule categories, one per rule (236-247). */
export const CATEGORY_ROUTE: i32 = 0;
export const CATEGORY_HOST: i32 = 1;
export const CATEGORY_SERVICE: i32 = 2;
export const CATEGORY_ROUTE_PREFIX: i32 = 3;
export const CATEGORY_ROUTE_AND_SERVICE: i32 = 4;

/** The category the SDK gives a rule: route first (with services: both needed), then domain,
 *  then service, then route prefix. Matchers of a lower category are ignored. */
export function ruleCategory(hasRoute: bool, hasDomain: bool, hasService: bool): i32 {
  if (hasRoute) return hasService ? CATEGORY_ROUTE_AND_SERVICE : CATEGORY_ROUTE;
  if (hasDomain) return CATEGORY_HOST;
  if (hasService) return CATEGORY_SERVICE;
  return CATEGORY_ROUTE_PREFIX;
}

/** The authority without its port: cut at the last ':' unless it sits inside "[...]" (364-379). */
export function stripPort(authority: string): string {
  const colon = authority.lastIndexOf(":");
  if (colon < 0) return authority;
  const v6End = authority.lastIndexOf("]");
  return v6End < 0 || v6End < colon ? authority.substring(0, colon) : authority;
}

/** `*x` matches hosts ending in x (so `*` matches all, `*.a.com` matches `b.a.com` but not `a.com`),
 *  `x*` hosts starting with x, anything else the exact host (349-358, 381-402). Only the request's
 *  port is stripped; the pattern is used as written. */
export function domainMatches(pattern: string, authority: string): bool {
  const host = stripPort(authority);
  if (pattern.startsWith("*")) return host.endsWith(pattern.substring(1));
  if (pattern.endsWith("*")) return host.startsWith(pattern.substring(0, pattern.length - 1));
  return host == pattern;
}

/** `cluster_name` must have exactly four `|` fields (`outbound|port|subset|fqdn`); an entry
 *  `fqdn:port` (split at its last ':') needs both equal, and any entry also matches when it equals
 *  the fqdn as a whole (404-420). */
export function serviceMatches(entry: string, clusterName: string): bool {
  const parts = clusterName.split("|");
  if (parts.length != 4) return false;
  const port = parts[1];
  const fqdn = parts[3];
  const colon = entry.lastIndexOf(":");
  if (colon >= 0 && entry.substring(0, colon) == fqdn && entry.substring(colon + 1) == port) return true;
  return entry == fqdn;
}

/** Route lists are OR-ed exact names; "" never matches because empty entries are dropped at parse. */
export function anyEquals(list: string[], value: string): bool {
  for (let i = 0; i < list.length; i++) if (list[i] == value) return true;
  return false;
}

export function anyPrefixOf(prefixes: string[], route: string): bool {
  for (let i = 0; i < prefixes.length; i++) if (route.startsWith(prefixes[i])) return true;
  return false;
}

export function anyDomain(patterns: string[], authority: string): bool {
  for (let i = 0; i < patterns.length; i++) if (domainMatches(patterns[i], authority)) return true;
  return false;
}

export function anyService(entries: string[], clusterName: string): bool {
  for (let i = 0; i < entries.length; i++) if (serviceMatches(entries[i], clusterName)) return true;
  return false;
}
