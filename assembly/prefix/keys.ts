// Prefix-tree keys of a request: block hashes (SHA-1 of each block's bytes, hashed as they are
// fed) and level keys, shallowest first.
//   Higress: block hash H_j = SHA-1(block_j), shown as 40 uppercase hex; level-i key = hex of
//   H_1 xor ... xor H_i (XOR of the digests, then hex: the same as Higress's per-byte hex XOR).
//   XOR is order-insensitive and self-inverse, so swapped blocks give the same level key and two
//   identical blocks cancel (anchor defect 6).
//   orderSensitive: H_j = SHA-1(decimal(j) ":" block_j). The position salt makes swapped or
//   repeated blocks distinct while keeping the XOR structure (level i still combines blocks
//   1..i). Trade-off: these keys differ from Higress's, so only our gateways share them (config
//   refuses orderSensitive together with compat). A chained hash (H_i = SHA-1(key_{i-1} || block_i))
//   would do the same job but drops the Higress key shape for no extra benefit here.
// Key names: compat -> the bare 40-hex level keys (Higress's; one keyspace for every route,
// cluster and model, and not Redis Cluster safe since they carry no hash tag); otherwise
// `<pool ns>:p:<model>:<hex>` (model "" unless namespaceByModel), where pool ns is the pool's
// `{...}` hash tag, so the script's keys all map to the pool's Redis Cluster slot.
// Never throws: an unusable body yields no keys (scan.source tells why).
import { JsonValue } from "../json/value";
import { Sha1, sha1HexUpper } from "../util/sha1";
import { bytesToHexUpper, xorInto } from "../util/hex";
import { utf8Encode } from "../util/utf8";
import { BlockOptions, BlockScan, BlockSink, scanBlocks } from "./blocks";
import { PrefixSettings } from "../config/prefix_settings";

export class KeyOptions extends BlockOptions {
  orderSensitive: bool = false;
  compat: bool = false;
  namespaceByModel: bool = true;
}

/** A BlockSink that keeps one 20-byte SHA-1 digest per closed block. */
export class BlockHasher extends BlockSink {
  digests: Uint8Array[] = [];
  private sha: Sha1 = new Sha1();
  private open: bool = false;

  constructor(public orderSensitive: bool) { super(); }

  feed(data: Uint8Array, start: i32, end: i32): void {
    if (!this.open) {
      this.open = true;
      if (this.orderSensitive) this.sha.update(utf8Encode((this.digests.length + 1).toString() + ":"));
    }
    this.sha.update(data, start, end);
  }

  close(): void {
    this.open = false;
    this.digests.push(this.sha.digest());
  }

  discard(): void {
    this.open = false;
    this.sha.reset();
  }
}

/** Uppercase hex of the running XOR of `digests`: entry i combines digests 0..i. */
export function levelKeysHex(digests: Uint8Array[]): string[] {
  const out = new Array<string>(digests.length);
  const acc = new Uint8Array(20);
  for (let i = 0; i < digests.length; i++) {
    xorInto(acc, digests[i]);
    out[i] = bytesToHexUpper(acc);
  }
  return out;
}

/** Longest model name kept as is in key names; longer or unusual names are hashed. */
const MODEL_IN_KEY_MAX: i32 = 64;

/**
 * The model as it appears in key names: itself when short and made of [A-Za-z0-9._/:@+-] (every
 * usual model id, so keys stay as they were), else "sha1-" + 40 hex of its UTF-8 bytes, so no
 * request content reaches a Redis key unhashed and a key's length is bounded (lua/README.md).
 */
export function modelInKey(model: string): string {
  let plain = model.length <= MODEL_IN_KEY_MAX;
  for (let i = 0; plain && i < model.length; i++) {
    const c = model.charCodeAt(i);
    plain = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) ||
      c == 0x2E || c == 0x5F || c == 0x2F || c == 0x3A || c == 0x40 || c == 0x2B || c == 0x2D;
  }
  if (plain) return model;
  return "sha1-" + sha1HexUpper(Uint8Array.wrap(String.UTF8.encode(model)));
}

/** What goes before the hex of every level key ("" in compat mode). */
export function levelKeyPrefix(poolNs: string, model: string, opts: KeyOptions): string {
  if (opts.compat) return "";
  return poolNs + ":p:" + (opts.namespaceByModel ? modelInKey(model) : "") + ":";
}

export class PrefixKeys {
  constructor(public scan: BlockScan, public keys: string[]) {}
}

/** The level keys of `body` (shallowest first); empty when the body has no usable blocks. */
export function prefixLevelKeys(body: JsonValue, opts: KeyOptions, poolNs: string): PrefixKeys {
  const hasher = new BlockHasher(opts.orderSensitive && !opts.compat);
  const scan = scanBlocks(body, opts, hasher);
  const hex = levelKeysHex(hasher.digests);
  const model = body.get("model");
  const prefix = levelKeyPrefix(poolNs, model !== null && model.isString() ? model.str() : "", opts);
  if (prefix.length > 0) {
    for (let i = 0; i < hex.length; i++) hex[i] = prefix + hex[i];
  }
  return new PrefixKeys(scan, hex);
}

/** Key options from a policy's prefix settings (prefix_cache and endpoint_metrics share the tree). */
export function keyOptionsFrom(p: PrefixSettings): KeyOptions {
  const o = new KeyOptions();
  o.compat = p.compat;
  o.orderSensitive = p.orderSensitive;
  o.namespaceByModel = p.namespaceByModel;
  o.maxHashBytes = p.maxHashBytes;
  o.maxBlocks = <i32>p.maxLevels;
  o.chunkBytes = <i32>p.promptChunkBytes;
  o.everyMessage = p.blockBoundary == "message";
  return o;
}
