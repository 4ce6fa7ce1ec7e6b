// cluster_hash settings (lb_type: cluster), read and refused exactly as Higress reads them
// (cluster_hash/lb_policy.go 31-76 at higress 8e4041c9; higress-parity.md section 9): `clusters`
// a non-empty list of {cluster: non-empty string, weight: integer > 0} whose weights sum to exactly
// 100 (duplicates allowed), `hash_header` (default x-mse-consumer), `cluster_header` (default
// x-higress-target-cluster); an empty string means the default, as in Higress. Both header names
// must be HTTP tokens (lower-cased, as Envoy's LowerCaseString does): Higress takes any text, but an
// invalid name fails every request in Envoy (config/reader.ts headerName).
import { JsonValue } from "../json/value";
import { ConfigReader, describeText } from "./reader";

export class WeightedCluster {
  constructor(public cluster: string, public weight: i32) {}
}

export class ClusterHashSettings {
  clusters: WeightedCluster[] = [];
  hashHeader: string = "x-mse-consumer";
  clusterHeader: string = "x-higress-target-cluster";
}

export function parseClusterHashSettings(r: ConfigReader): ClusterHashSettings {
  const s = new ClusterHashSettings();
  s.hashHeader = r.headerNameOrDefault("hash_header", s.hashHeader);
  s.clusterHeader = r.headerNameOrDefault("cluster_header", s.clusterHeader);
  const o = r.obj;
  const v: JsonValue | null = o === null ? null : o.get("clusters");
  const items: JsonValue[] = v !== null && v.isArray() ? v.arr() : [];
  if (items.length == 0) {
    r.errors.add(r.key("clusters") + " must be a non-empty list of {cluster, weight}");
    return s;
  }
  let sum: i64 = 0;
  for (let i = 0; i < items.length; i++) {
    const path = r.key("clusters") + "[" + i.toString() + "]";
    if (!items[i].isObject()) { r.errors.add(path + " must be an object {cluster, weight}"); continue; }
    const c = new ConfigReader(items[i], path, r.errors);
    c.rejectUnknown(["cluster", "weight"]);
    const name = c.str("cluster", "");
    if (name.length == 0) r.errors.add(c.key("cluster") + " must be a non-empty string");
    else c.checkClusterName(c.key("cluster"), name);
    const before = r.errors.messages.length;
    const w = c.int("weight", 0, 1, 100); // absent, null or "": 0 (Higress: "weight must be > 0")
    if (w == 0 && r.errors.messages.length == before) r.errors.add(c.key("weight") + " is required (an integer in [1, 100])");
    sum += w;
    s.clusters.push(new WeightedCluster(name, <i32>w));
  }
  if (r.errors.ok && sum != 100) r.errors.add(r.key("clusters") + " weights must sum to 100, got " + sum.toString());
  return s;
}
