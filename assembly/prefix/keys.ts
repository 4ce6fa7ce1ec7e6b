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
// cluster and model, and not Redis Cluster safe since they carry no hash tag; the model is not
// part of them at all, so no request text reaches a key name); otherwise
// `<pool ns>:p:<model tag>:<hex>`, model tag = the first 16 hex digits (lowercase) of SHA-1 of the
// model name's UTF-8 bytes ("" without a string model or when namespaceByModel is off). The
// model is hashed, not copied: a key name never carries request text, and its length is fixed
// whatever the model's (issue 11: a 100 KB model name made 64 keys of 100 KB each).
// pool ns is the pool's `{...}` hash tag, so the script's keys all map to the pool's Redis
// Cluster slot.
// Compat mode also lifts the caps (maxPrefixLevels, maxHashBytes) and reads only `messages`:
// Higress writes one key per block, however many, and none for prompt/input bodies.
// Never throws: an unusable body yields no keys (scan.source tells why).
import { JsonValue } from "../json/value";
import { Sha1 } from "../util/sha1";
import { prefixedHexUpper, u64ToHexLower } from "../util/hex";
import { utf8Encode } from "../util/utf8";
import { BlockOptions, BlockScan, BlockSink, scanBlocks } from "./blocks";
import { PrefixSettings } from "../config/prefix_settings";

export class KeyOptions extends BlockOptions {
  orderSensitive: bool = false;
  compat: bool = false;
  namespaceByModel: bool = true;
}

/** A BlockSink that turns each closed block into its level key: SHA-1 of the block XORed into
 *  the running digest, then `prefix` + 40 uppercase hex (one string per level, nothing else). */
export class BlockHasher extends BlockSink {
  keys: string[] = [];
  private sha: Sha1 = new Sha1();
  private acc: Uint8Array = new Uint8Array(20);
  private open: bool = false;

  constructor(public orderSensitive: bool, public prefix: string = "") { super(); }

  feed(data: Uint8Array, start: i32, end: i32): void {
    if (!this.open) {
      this.open = true;
      if (this.orderSensitive) this.sha.update(utf8Encode((this.keys.length + 1).toString() + ":"));
    }
    this.sha.update(data, start, end);
  }

  close(): void {
    this.open = false;
    this.sha.digestXorInto(this.acc);
    this.keys.push(prefixedHexUpper(this.prefix, this.acc));
  }

  discard(): void {
    this.open = false;
    this.sha.reset();
  }
}

/** The model's part of a key name: 16 lowercase hex digits of SHA-1(model), "" for "". */
export function modelTag(model: string): string {
  if (model.length == 0) return "";
  if (model == lastModel) return lastTag; // a route serves few models: skip the hash
  const d = new Sha1();
  d.update(utf8Encode(model));
  lastTag = u64ToHexLower(bswap<u64>(load<u64>(d.digest().dataStart)));
  lastModel = model;
  return lastTag;
}

let lastModel = "";
let lastTag = "";

/** What goes before the hex of every level key ("" in compat mode). */
export function levelKeyPrefix(poolNs: string, model: string, opts: KeyOptions): string {
  if (opts.compat) return "";
  return poolNs + ":p:" + (opts.namespaceByModel ? modelTag(model) : "") + ":";
}

export class PrefixKeys {
  constructor(public scan: BlockScan, public keys: string[]) {}
}

/** The level keys of `body` (shallowest first); empty when the body has no usable blocks. */
export function prefixLevelKeys(body: JsonValue, opts: KeyOptions, poolNs: string): PrefixKeys {
  let prefix = "";
  if (!opts.compat) {
    const model = body.get("model");
    prefix = levelKeyPrefix(poolNs, model !== null && model.isString() ? model.str() : "", opts);
  }
  const hasher = new BlockHasher(opts.orderSensitive && !opts.compat, prefix);
  const scan = scanBlocks(body, opts.compat ? higressBlockOptions(opts) : opts, hasher);
  return new PrefixKeys(scan, hasher.keys);
}

// Higress's block rules: `messages` only, no level or byte cap, blocks at user turns.
function higressBlockOptions(opts: KeyOptions): BlockOptions {
  const o = new BlockOptions();
  o.maxHashBytes = i64.MAX_VALUE;
  o.maxBlocks = 256; // prefix.lua takes at most 256 level keys: deeper user turns are not written (Higress has no cap)
  o.chunkBytes = opts.chunkBytes;
  o.everyMessage = false;
  o.chatOnly = true;
  return o;
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
