// cluster_hash (lb_type: cluster): a header value always maps to the same service, in weighted
// proportions, exactly as Higress's plugin maps it (slots.ts; golden-tested against a TypeScript
// statement of Higress's algorithm). Decided at request headers; stateless.
// Inputs: the hash header's raw value bytes. Config: clusters [{cluster, weight}] summing to 100,
// hash_header (x-mse-consumer), cluster_header (x-higress-target-cluster) (config/cluster_hash_settings.ts).
// Failure behaviour (as Higress): hash header missing or empty -> local 403 "hash header required";
// the cluster header cannot be written -> local 500 "internal error".
import { Policy } from "../policy";
import { LbConfig } from "../../config/lb_config";
import { Services } from "../../services/services";
import { Verdict } from "../../services/request/verdict";
import { LbRequest } from "../../services/request/request";
import * as host from "../../host/calls";
import { SlotTable } from "./slots";
import { writeClusterHeader } from "../cluster_header";

export class ClusterHashPolicy extends Policy {
  private readonly table: SlotTable;

  constructor(cfg: LbConfig, services: Services) {
    super(cfg, services);
    this.table = new SlotTable(cfg.clusterHash.clusters);
  }

  needsBody(): bool { return false; }

  decide(r: LbRequest): Verdict {
    const s = this.cfg.clusterHash;
    const key = host.getHeaderBytes(host.MapType.RequestHeaders, s.hashHeader);
    if (key === null || key.byteLength == 0) {
      host.log(host.LogLevel.Warn, "cluster_hash: missing hash header " + s.hashHeader + ", rejecting request");
      host.sendLocalResponse(403, "llmlb_hash_header_required", "hash header required", []);
      return Verdict.Rejected;
    }
    const service = this.table.clusterFor(Uint8Array.wrap(key));
    if (!writeClusterHeader(r, s.clusterHeader, service, "cluster_hash")) {
      host.sendLocalResponse(500, "llmlb_cluster_header_failed", "internal error", []);
      return Verdict.Rejected;
    }
    return Verdict.Pass;
  }
}
