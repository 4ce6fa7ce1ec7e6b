import { describe, expect, it } from "vitest";
import { chainBlockHash, chainRoot, extendBlockHashes, KvBlockPool } from "../../host-test/sim/kv.js";

const words = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("chained block hashes", () => {
  it("cover full blocks only and depend on every earlier block", () => {
    const a = extendBlockHashes([], words(40), 16);
    expect(a).toHaveLength(2); // 40 tokens = 2 full blocks + 8 leftover
    const changedFirst = words(40);
    changedFirst[0] = "other";
    const b = extendBlockHashes([], changedFirst, 16);
    expect(b[0]).not.toBe(a[0]);
    expect(b[1]).not.toBe(a[1]); // same tokens in block 1, different parent
    expect(chainBlockHash(0, words(16))).toBe(a[0]);
    expect(extendBlockHashes([], words(40), 16, chainRoot("lora-a"))[0]).not.toBe(a[0]);
  });

  it("extends a memo without recomputing", () => {
    const memo = extendBlockHashes([], words(20), 16);
    const first = memo[0];
    extendBlockHashes(memo, words(48), 16);
    expect(memo).toHaveLength(3);
    expect(memo[0]).toBe(first);
    expect(memo).toEqual(extendBlockHashes([], words(48), 16));
  });
});

describe("KvBlockPool", () => {
  function cachedRequest(pool: KvBlockPool, tokens: string[]) {
    const hashes = extendBlockHashes([], tokens, pool.blockSize);
    const blocks = pool.allocate(hashes.length)!;
    blocks.forEach((block, i) => pool.cacheBlock(block, hashes[i]));
    return { hashes, blocks };
  }

  it("finds the longest cached chain, capped", () => {
    const pool = new KvBlockPool(8, 4);
    const { hashes } = cachedRequest(pool, words(12));
    expect(pool.findCachedPrefix(hashes, 10)).toHaveLength(3);
    expect(pool.findCachedPrefix(hashes, 2)).toHaveLength(2);
    const diverging = extendBlockHashes([], [...words(8), "x", "y", "z", "q"], 4);
    expect(pool.findCachedPrefix(diverging, 10)).toHaveLength(2);
  });

  it("counts only referenced blocks as used; freed blocks stay reusable", () => {
    const pool = new KvBlockPool(8, 4);
    const { hashes, blocks } = cachedRequest(pool, words(12));
    expect(pool.usage()).toBe(3 / 8);
    pool.free(blocks);
    expect(pool.usage()).toBe(0);
    const hit = pool.findCachedPrefix(hashes, 10);
    expect(hit.map((b) => b.id)).toEqual(blocks.map((b) => b.id));
    pool.touch(hit);
    expect(pool.usage()).toBe(3 / 8);
    expect(pool.numFreeBlocks()).toBe(5);
  });

  it("evicts a freed request's LAST blocks first", () => {
    const pool = new KvBlockPool(4, 4);
    const { hashes, blocks } = cachedRequest(pool, words(16));
    pool.free(blocks);
    pool.allocate(1);
    expect(pool.findCachedPrefix(hashes, 4)).toHaveLength(3);
    expect(pool.isCached(hashes[3])).toBe(false);
    pool.allocate(2);
    expect(pool.findCachedPrefix(hashes, 4)).toHaveLength(1);
    expect(pool.evictions).toBe(3);
  });

  it("refuses an allocation it cannot satisfy without taking anything", () => {
    const pool = new KvBlockPool(4, 4);
    pool.allocate(3);
    expect(pool.allocate(2)).toBeNull();
    expect(pool.numFreeBlocks()).toBe(1);
  });

  it("keeps the first block cached under a hash (duplicates stay uncached)", () => {
    const pool = new KvBlockPool(4, 4);
    const { hashes, blocks } = cachedRequest(pool, words(4));
    const duplicate = pool.allocate(1)![0];
    pool.cacheBlock(duplicate, hashes[0]);
    expect(duplicate.hash).toBeNull();
    expect(pool.findCachedPrefix(hashes, 1)[0]).toBe(blocks[0]);
  });
});
