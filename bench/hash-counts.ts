// Block hashes held by requests a central picker routed, counted per hash (several requests may
// hold the same prefix block): the omniscient picker's blocks not yet prefilled, Dynamo's active
// blocks. Failure behaviour: none (a release of a hash not held is ignored).

export function holdHashes(counts: Map<number, number>, hashes: readonly number[]): void {
  for (const h of hashes) counts.set(h, (counts.get(h) ?? 0) + 1);
}

export function releaseHashes(counts: Map<number, number>, hashes: readonly number[]): void {
  for (const h of hashes) {
    const n = (counts.get(h) ?? 1) - 1;
    if (n <= 0) counts.delete(h);
    else counts.set(h, n);
  }
}
