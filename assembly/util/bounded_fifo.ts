// A first-in-first-out list of at most `max` items: a push onto a full list drops the oldest.
// For work kept to be retried later (releases, queue exits) whose loss only delays a cleanup
// that a TTL does anyway; the bound keeps an outage from growing the VM's memory without end.
// Never throws: front() on an empty list is the caller's mistake and is guarded by length.

export class BoundedFifo<T> {
  private items: T[] = [];

  constructor(private readonly max: i32) {}

  get length(): i32 { return this.items.length; }

  push(item: T): void {
    if (this.items.length >= this.max) this.items.shift();
    this.items.push(item);
  }

  /** The oldest item; only when length > 0. */
  front(): T { return this.items[0]; }

  /** Removes and returns the oldest item; only when length > 0. */
  shift(): T { return this.items.shift(); }

  clear(): void { this.items = []; }
}
