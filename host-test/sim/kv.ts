// KV block pool with vLLM-style automatic prefix caching.
// - Fixed number of blocks of `blockSize` tokens; a block is referenced by the requests using it.
// - Full blocks get a chained hash (block i's hash covers block i-1's hash and its own tokens),
//   so a hash identifies a whole prefix. `cachedByHash` maps hash -> block.
// - Unreferenced blocks sit in an LRU free queue but keep their hash: they are reusable by a
//   prefix lookup until allocation pops (evicts) them. Freeing a request pushes its blocks in
//   REVERSE order, so its last blocks (least likely shared) are evicted first.
// - KV usage counts referenced blocks only (cached-but-free blocks are free), like vLLM.
// Failure behaviour: allocate() returns null when too few blocks are free (caller preempts).
import { hash53, hashTokens } from "./hash.js";

export interface KvBlock {
  readonly id: number;
  refCount: number;
  /** Chained hash once the block is full and computed; null otherwise. */
  hash: number | null;
  prev: KvBlock | null;
  next: KvBlock | null;
  inFreeQueue: boolean;
}

/** Root of a hash chain: 0 for the base model, a per-adapter salt for LoRA (no cross-sharing). */
export function chainRoot(lora: string | null): number {
  return lora === null ? 0 : hash53(lora) + 1;
}

/** Hash of one full block, chained on its parent block's hash (or the chain root). */
export function chainBlockHash(parentHash: number, blockTokens: readonly string[]): number {
  return hashTokens(blockTokens, 0, blockTokens.length, parentHash);
}

/**
 * Extends `hashes` (the memo of a request's full-block hashes) to cover every full block of
 * `tokens`; returns the same array.
 */
export function extendBlockHashes(hashes: number[], tokens: readonly string[], blockSize: number, root = 0): number[] {
  const fullBlocks = Math.floor(tokens.length / blockSize);
  for (let i = hashes.length; i < fullBlocks; i++) {
    hashes.push(hashTokens(tokens, i * blockSize, (i + 1) * blockSize, i === 0 ? root : hashes[i - 1]));
  }
  return hashes;
}

/** hash -> block: a Map, or in a copied pool the source's index seen under the copy's own changes. */
interface BlockIndex {
  get(hash: number): KvBlock | undefined;
  has(hash: number): boolean;
  set(hash: number, block: KvBlock): void;
  delete(hash: number): boolean;
  readonly size: number;
}

/** A copy's index: the source's entries (their blocks mapped by id to the copy's) under its own sets and deletes. */
class OverlayIndex implements BlockIndex {
  private readonly own = new Map<number, KvBlock | null>();
  private delta = 0;

  constructor(private readonly base: BlockIndex, private readonly blocks: readonly KvBlock[]) {}

  get(hash: number): KvBlock | undefined {
    const own = this.own.get(hash);
    if (own !== undefined) return own ?? undefined;
    const block = this.base.get(hash);
    return block && this.blocks[block.id];
  }

  has(hash: number): boolean {
    return this.get(hash) !== undefined;
  }

  set(hash: number, block: KvBlock): void {
    if (!this.has(hash)) this.delta++;
    this.own.set(hash, block);
  }

  delete(hash: number): boolean {
    const had = this.has(hash);
    if (had) this.delta--;
    this.own.set(hash, null);
    return had;
  }

  get size(): number {
    return this.base.size + this.delta;
  }
}

/** Doubly linked LRU queue of unreferenced blocks: evict from the head, free to the tail. */
class FreeBlockQueue {
  private head: KvBlock | null = null;
  private tail: KvBlock | null = null;
  length = 0;

  pushTail(block: KvBlock): void {
    block.prev = this.tail;
    block.next = null;
    if (this.tail) this.tail.next = block;
    else this.head = block;
    this.tail = block;
    block.inFreeQueue = true;
    this.length++;
  }

  popHead(): KvBlock | null {
    const block = this.head;
    if (block) this.remove(block);
    return block;
  }

  remove(block: KvBlock): void {
    if (block.prev) block.prev.next = block.next;
    else this.head = block.next;
    if (block.next) block.next.prev = block.prev;
    else this.tail = block.prev;
    block.prev = block.next = null;
    block.inFreeQueue = false;
    this.length--;
  }

  /** Takes `source`'s order, on the blocks of the same ids in `blocks`. */
  copyFrom(source: FreeBlockQueue, blocks: readonly KvBlock[]): void {
    this.head = source.head && blocks[source.head.id];
    this.tail = source.tail && blocks[source.tail.id];
    this.length = source.length;
  }
}

export class KvBlockPool {
  readonly numBlocks: number;
  readonly blockSize: number;
  private readonly freeQueue = new FreeBlockQueue();
  private cachedByHash: BlockIndex = new Map<number, KvBlock>();
  /** Every block, by id. */
  private readonly blocks: KvBlock[] = [];
  /** Prefix-cache counters, in tokens (vllm:prefix_cache_queries_total / hits_total). */
  queriedTokens = 0;
  hitTokens = 0;
  evictions = 0;

  constructor(numBlocks: number, blockSize: number) {
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
    for (let id = 0; id < numBlocks; id++) {
      const block: KvBlock = { id, refCount: 0, hash: null, prev: null, next: null, inFreeQueue: false };
      this.blocks.push(block);
      this.freeQueue.pushTail(block);
    }
  }

  /** This pool's block of the same id as `block` (a block of a pool copied with copyFrom). */
  blockLike(block: KvBlock): KvBlock {
    return this.blocks[block.id];
  }

  /**
   * Becomes a copy of `source` (same geometry): each block's references, hash and place in the
   * LRU free queue, the prefix cache and the counters. The copy's changes never reach `source`;
   * it reads `source`'s prefix cache under its own changes (copying ~30k entries would cost
   * milliseconds), so it is valid only while `source` does not change: copy again after that.
   */
  copyFrom(source: KvBlockPool): void {
    if (source.numBlocks !== this.numBlocks || source.blockSize !== this.blockSize) throw new Error("KvBlockPool.copyFrom: another geometry");
    const mine = this.blocks;
    for (let i = 0; i < mine.length; i++) {
      const from = source.blocks[i];
      const to = mine[i];
      to.refCount = from.refCount;
      to.hash = from.hash;
      to.prev = from.prev && mine[from.prev.id];
      to.next = from.next && mine[from.next.id];
      to.inFreeQueue = from.inFreeQueue;
    }
    this.freeQueue.copyFrom(source.freeQueue, mine);
    this.cachedByHash = new OverlayIndex(source.cachedByHash, mine);
    this.queriedTokens = source.queriedTokens;
    this.hitTokens = source.hitTokens;
    this.evictions = source.evictions;
  }

  numFreeBlocks(): number {
    return this.freeQueue.length;
  }

  /** Fraction of blocks referenced by requests, 0..1. */
  usage(): number {
    return (this.numBlocks - this.freeQueue.length) / this.numBlocks;
  }

  /** Number of full blocks currently holding a cached hash (referenced or not). */
  numCachedBlocks(): number {
    return this.cachedByHash.size;
  }

  isCached(hash: number): boolean {
    return this.cachedByHash.has(hash);
  }

  /** Longest chain of cached blocks for `hashes`, at most `maxBlocks` long. Does not touch them. */
  findCachedPrefix(hashes: readonly number[], maxBlocks: number): KvBlock[] {
    const hit: KvBlock[] = [];
    const limit = Math.min(maxBlocks, hashes.length);
    for (let i = 0; i < limit; i++) {
      const block = this.cachedByHash.get(hashes[i]);
      if (!block) break;
      hit.push(block);
    }
    return hit;
  }

  recordLookup(queriedTokens: number, hitTokens: number): void {
    this.queriedTokens += queriedTokens;
    this.hitTokens += hitTokens;
  }

  /** Takes a reference on cached blocks (removing unreferenced ones from the free queue). */
  touch(blocks: readonly KvBlock[]): void {
    for (const block of blocks) {
      if (block.refCount === 0 && block.inFreeQueue) this.freeQueue.remove(block);
      block.refCount++;
    }
  }

  /** Pops `count` blocks from the free queue head, evicting their cached hashes; null if short. */
  allocate(count: number): KvBlock[] | null {
    if (count > this.freeQueue.length) return null;
    const blocks: KvBlock[] = [];
    for (let i = 0; i < count; i++) {
      const block = this.freeQueue.popHead() as KvBlock;
      if (block.hash !== null) {
        if (this.cachedByHash.get(block.hash) === block) this.cachedByHash.delete(block.hash);
        block.hash = null;
        this.evictions++;
      }
      block.refCount = 1;
      blocks.push(block);
    }
    return blocks;
  }

  /** Drops one reference per block, in reverse order, so a request's tail is evicted first. */
  free(blocks: readonly KvBlock[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      const block = blocks[i];
      block.refCount--;
      if (block.refCount === 0) this.freeQueue.pushTail(block);
    }
  }

  /** Registers a full, computed block under its chained hash (first writer wins, like vLLM). */
  cacheBlock(block: KvBlock, hash: number): void {
    if (block.hash !== null || this.cachedByHash.has(hash)) return;
    block.hash = hash;
    this.cachedByHash.set(hash, block);
  }
}
