// The parse result's index: one pass over the body writes 4 i32 per value (and per member name)
// into a flat tape instead of building objects, so a 128 KB chat body costs one scan and a few
// hundred bytes of tape, and values are materialised only where the plugin looks.
// Entry at index i (a multiple of 4):
//   [i]   tag: kind (JsonKind, or TAPE_KEY for a member name) | TAPE_ESCAPES when the string has a
//         backslash escape
//   [i+1] rawStart, [i+2] rawEnd: byte offsets of the value's own text (strings with quotes)
//   [i+3] next: index just past the value (past all descendants for arrays and objects)
// An object's entries are name, value, name, value...; an array's are its elements.

export const TAPE_KEY: i32 = 6;
export const TAPE_KIND_MASK: i32 = 0xFF;
export const TAPE_ESCAPES: i32 = 0x100;

export class JsonTape {
  data: StaticArray<i32>;
  length: i32 = 0;

  constructor(capacityEntries: i32) {
    this.data = new StaticArray<i32>(max(16, capacityEntries) << 2);
  }

  /** Appends an entry (next = just past it) and returns its index. */
  // @ts-ignore: decorator
  @inline push(tag: i32, start: i32, end: i32): i32 {
    const i = this.length;
    if (i + 4 > this.data.length) this.grow();
    const p = changetype<usize>(this.data) + (<usize>i << 2);
    store<i32>(p, tag);
    store<i32>(p, start, 4);
    store<i32>(p, end, 8);
    store<i32>(p, i + 4, 12);
    this.length = i + 4;
    return i;
  }

  // @ts-ignore: decorator
  @inline at(i: i32): i32 {
    return load<i32>(changetype<usize>(this.data) + (<usize>i << 2));
  }

  // @ts-ignore: decorator
  @inline set(i: i32, v: i32): void {
    store<i32>(changetype<usize>(this.data) + (<usize>i << 2), v);
  }

  private grow(): void {
    const old = this.data;
    const next = new StaticArray<i32>(old.length << 1);
    memory.copy(changetype<usize>(next), changetype<usize>(old), <usize>this.length << 2);
    this.data = next;
  }
}
