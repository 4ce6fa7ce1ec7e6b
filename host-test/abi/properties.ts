// proxy_get_property / proxy_set_property. Paths are segments joined by '\0' (spec v0.2.1).
// Values are serialized like Envoy's wasm serializeValue: strings as bytes, integers as 8-byte
// little-endian int64, timestamps as int64 Unix nanoseconds, maps as pair maps.
// Sources: Envoy docs "Attributes" (request.*, response.*, source/destination/upstream.address,
// xds.*), Envoy source/extensions/common/wasm/context.cc getProperty (unknown names fall back to
// filter state written by set_property); higress-abi.md (route_name, cluster_name, plugin_*).
// Failure behaviour: a missing property is NotFound (status 1), never a crash.
import { encodePairs } from "./pairs.js";
import type { RootContext } from "./root-context.js";
import type { HttpStream } from "./stream.js";

const int64 = (n: number | bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt(n), 0);
  return b;
};
const str = (s: string | null | undefined): Buffer | null => (s === null || s === undefined ? null : Buffer.from(s, "utf8"));

function pluginProperty(ctx: RootContext | HttpStream, name: string): Buffer | null | undefined {
  const o = ctx.vm.host.options;
  switch (name) {
    case "plugin_root_id": return str(o.rootId);
    case "plugin_name": return str(o.pluginName);
    case "plugin_vm_id": return str(o.vmId);
    default: return undefined;
  }
}

function streamProperty(s: HttpStream, path: string[]): Buffer | null {
  const [top, sub, extra] = path;
  const req = s.request.headers;
  if (top === "route_name" || (top === "xds" && sub === "route_name")) return str(s.route);
  if (top === "cluster_name" || (top === "xds" && sub === "cluster_name")) return str(s.cluster);
  if (top === "request") {
    const p = req?.get(":path");
    switch (sub) {
      case "path": return str(p);
      case "url_path": return p === undefined ? null : str(p.split("?")[0]);
      case "query": return p === undefined || !p.includes("?") ? null : str(p.slice(p.indexOf("?") + 1));
      case "method": return str(req?.get(":method"));
      case "host": return str(req?.get(":authority"));
      case "scheme": return str(req?.get(":scheme"));
      case "id": return str(req?.get("x-request-id"));
      case "useragent": return str(req?.get("user-agent"));
      case "referer": return str(req?.get("referer"));
      case "protocol": return str(s.facts.protocol);
      case "time": return int64(BigInt(Math.round(s.facts.startTimeMs)) * 1_000_000n);
      case "headers":
        if (!req) return null;
        if (extra !== undefined) return str(req.get(extra));
        return encodePairs(req.pairs());
      default: return null;
    }
  }
  if (top === "response") {
    switch (sub) {
      case "code": return s.responseCode === null ? null : int64(s.responseCode);
      case "code_details": return str(s.codeDetails);
      case "flags": return int64(s.responseFlags);
      case "headers": {
        const h = s.response.headers;
        if (!h) return null;
        return extra !== undefined ? str(h.get(extra)) : encodePairs(h.pairs());
      }
      default: return null;
    }
  }
  if (top === "source" && sub === "address") return str(s.facts.sourceAddress);
  if (top === "destination" && sub === "address") return str(s.facts.destinationAddress);
  if (top === "upstream" && sub === "address") return str(s.upstreamAddress);
  return null;
}

/** Returns the serialized value or null (NotFound). */
export function getProperty(ctx: RootContext | HttpStream, rawPath: string): Buffer | null {
  const path = rawPath.split("\0").filter((seg, i, all) => seg !== "" || i < all.length - 1);
  if (path.length === 0) return null;
  // Values written by set_property win (Envoy filter-state lookup by the full path).
  const own = ctx.properties.get(path.join("\0"));
  if (own) return own;
  if (ctx.kind === "http") {
    const root = ctx.parentRoot.properties.get(path.join("\0"));
    if (root) return root;
  }
  const plugin = pluginProperty(ctx, path[0]);
  if (plugin !== undefined) return plugin;
  if (path[0] === "node" && path[1] === "id") return str(ctx.vm.host.options.nodeId);
  return ctx.kind === "http" ? streamProperty(ctx, path) : null;
}

/** Higress's Envoy acts on these property writes (context.cc setProperty), besides storing them. */
const BUFFER_LIMIT_PROPERTIES = new Set(["set_decoder_buffer_limit", "set_encoder_buffer_limit"]);

export function setProperty(ctx: RootContext | HttpStream, rawPath: string, value: Buffer): void {
  const path = rawPath.split("\0").filter((seg, i, all) => seg !== "" || i < all.length - 1);
  const key = path.join("\0");
  ctx.properties.set(key, Buffer.from(value));
  if (ctx.kind === "http" && BUFFER_LIMIT_PROPERTIES.has(key)) ctx.setBufferLimitProperty(value);
}
