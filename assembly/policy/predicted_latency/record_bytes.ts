// The bytes of a sibling record (sibling_streams.ts): a text of lines ("\n") of fields (one
// space), non-negative integers and host addresses, read in place by a Cursor and written by a
// RecordWriter into one reused buffer, so neither a read nor a write makes a string per line or
// per field (records are read and written at every change, hundreds of lines under load).
// No host calls; never throws.

/** A cursor over a record's bytes (fields separated by one space, lines by "\n"): read in place,
 *  without decoding the record or splitting it into strings (a sibling's record is read at every
 *  change, hundreds of lines under an overload). Reads are raw loads below `len`. */
export class Cursor {
  pos: i32 = 0;
  private readonly ptr: usize;
  private readonly len: i32;
  /** The last field `host()` read: its bytes and text (a record lists a host's lines together). */
  private hostStart: i32 = 0;
  private hostEnd: i32 = 0;
  private hostText: string = "";
  /** Whether the last host() returned a new text (another host than the line before). */
  newHost: bool = false;

  constructor(private b: Uint8Array) {
    this.ptr = b.dataStart;
    this.len = b.length;
  }

  @inline private at(i: i32): i32 { return <i32>load<u8>(this.ptr + <usize>i); }

  get atLineEnd(): bool { return this.pos >= this.len || this.at(this.pos) == 10; }
  peek(): i32 { return this.pos < this.len ? this.at(this.pos) : -1; }

  /** Moves past the current field; returns where it ended (the space after it is consumed). */
  private field(): i32 {
    let p = this.pos;
    const n = this.len;
    while (p < n) {
      const ch = this.at(p);
      if (ch == 32 || ch == 10) break;
      p++;
    }
    this.pos = p < n && this.at(p) == 32 ? p + 1 : p;
    return p;
  }

  /** The next field as text ("" when empty); the space after it is consumed. */
  text(): string {
    const start = this.pos;
    const end = this.field();
    return String.UTF8.decodeUnsafe(this.ptr + <usize>start, <usize>(end - start));
  }

  /** The next field as text, like text(), but the text of the last host() field when the bytes
   *  are the same (decoded once per run of a host's lines, not per line). */
  host(): string {
    const start = this.pos;
    const end = this.field();
    const len = end - start;
    if (len > 0 && len == this.hostEnd - this.hostStart
      && memory.compare(this.ptr + <usize>start, this.ptr + <usize>this.hostStart, <usize>len) == 0) {
      this.newHost = false;
    } else {
      this.hostText = String.UTF8.decodeUnsafe(this.ptr + <usize>start, <usize>len);
      this.newHost = true;
    }
    this.hostStart = start;
    this.hostEnd = end;
    return this.hostText;
  }

  /** The next field as a non-negative integer (what records hold); -1 when it is not one. */
  num(): f64 {
    let p = this.pos;
    const n = this.len;
    let v: f64 = 0;
    let ok = true;
    while (p < n) {
      const ch = this.at(p);
      if (ch == 32 || ch == 10) break;
      const d = ch - 48;
      if (d < 0 || d > 9) ok = false;
      else v = v * 10 + <f64>d;
      p++;
    }
    if (p == this.pos) ok = false;
    this.pos = p < n && this.at(p) == 32 ? p + 1 : p;
    return ok ? v : -1;
  }

  /** Moves to the start of the next line; false at the end of the record. */
  nextLine(): bool {
    let p = this.pos;
    const n = this.len;
    while (p < n && this.at(p) != 10) p++;
    if (p >= n) { this.pos = p; return false; }
    this.pos = p + 1;
    return true;
  }
}

/** A record's head: its writer's tag and when it was published (its clock), read without the
 *  rest; "" and -1 when the head is malformed. */
export class RecordHead {
  readonly tag: string;
  readonly published: f64;

  constructor(value: ArrayBuffer) {
    const c = new Cursor(Uint8Array.wrap(value));
    const tag = c.text();
    const published = c.num();
    const ok = tag.length > 0 && published >= 0;
    this.tag = ok ? tag : "";
    this.published = ok ? published : -1;
  }

  get ok(): bool { return this.tag.length > 0; }
}

/** Writes a record's lines into a buffer reused from one record to the next. */
export class RecordWriter {
  private buf: Uint8Array = new Uint8Array(4096);
  private len: i32 = 0;
  /** The current line has a field (the next one is preceded by a space). */
  private fields: bool = false;

  /** A new record. */
  reset(): void {
    this.len = 0;
    this.fields = false;
  }

  /** Ends the current line (the next field starts a new one). */
  line(): void {
    this.room(1);
    store<u8>(this.buf.dataStart + <usize>this.len, 10);
    this.len++;
    this.fields = false;
  }

  /** A text field (ASCII written as is; another text as its UTF-8 bytes). */
  text(s: string, prefix: i32 = -1): void {
    this.space();
    if (prefix >= 0) this.byte(prefix);
    const n = s.length;
    this.room(n);
    for (let i = 0; i < n; i++) {
      const ch = s.charCodeAt(i);
      if (ch >= 128) { this.utf8(s, i); return; }
      store<u8>(this.buf.dataStart + <usize>this.len, <u8>ch);
      this.len++;
    }
  }

  /** A number field: rounded to an integer; not finite: 0 (a negative one is written with its
   *  sign, which a reader refuses, as it should). */
  num(v: f64): void {
    this.space();
    let n: i64 = isFinite(v) ? <i64>Math.round(v) : 0;
    this.room(21);
    if (n < 0) { this.byte(45); n = -n; }
    let digits = 1;
    for (let t = n; t >= 10; t /= 10) digits++;
    const at = this.buf.dataStart + <usize>this.len;
    for (let k = digits - 1; k >= 0; k--) {
      store<u8>(at + <usize>k, <u8>(48 + n % 10));
      n /= 10;
    }
    this.len += digits;
  }

  /** Bytes as they are (another record inside this one, after a line giving its length). */
  raw(b: ArrayBuffer): void {
    const n = b.byteLength;
    this.room(n);
    memory.copy(this.buf.dataStart + <usize>this.len, changetype<usize>(b), <usize>n);
    this.len += n;
  }

  /** The record written: a copy of the bytes. */
  bytes(): ArrayBuffer {
    const out = new ArrayBuffer(this.len);
    memory.copy(changetype<usize>(out), this.buf.dataStart, <usize>this.len);
    return out;
  }

  private space(): void {
    if (this.fields) this.byte(32);
    this.fields = true;
  }

  private byte(b: i32): void {
    this.room(1);
    store<u8>(this.buf.dataStart + <usize>this.len, <u8>b);
    this.len++;
  }

  /** The rest of `s` from `from` as UTF-8. */
  private utf8(s: string, from: i32): void {
    const b = Uint8Array.wrap(String.UTF8.encode(s.substring(from)));
    this.room(b.length);
    memory.copy(this.buf.dataStart + <usize>this.len, b.dataStart, <usize>b.length);
    this.len += b.length;
  }

  private room(n: i32): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(max(this.buf.length * 2, this.len + n));
    memory.copy(next.dataStart, this.buf.dataStart, <usize>this.len);
    this.buf = next;
  }
}
