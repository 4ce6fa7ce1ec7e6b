// Splits a request body into prefix blocks and streams their bytes to a BlockSink (a hasher, or
// a collector in tests). Nothing is concatenated: role and content bytes are fed as views of the
// body, so a 128 KB conversation costs one pass of SHA-1 and no copies.
//
// Chat (`messages`) -- exactly Higress's ai-load-balancer prefix_cache:
//   - each message appends  role ":" content  (gjson String() of each: gjson_text.ts), with no
//     separator between messages; a block closes after every message whose role is exactly
//     "user" (case-sensitive) and after the last message, whatever its role. So system and
//     assistant/tool messages join the next user message's block: [system, user] is one block,
//     a system-only or assistant-first conversation is one block ending at the next user message
//     (or at the end), and tool messages are ordinary messages ("tool:<content>").
//   - every message needs both keys present: `"content": null` counts (it hashes as ""), a
//     missing key does not. One message without role or content makes the whole body Invalid
//     (Higress then skips balancing; the policy falls back to least request). A message that
//     is not an object has neither key.
//   - `messages` that is an object is one message (gjson's Array() wraps a non-array value);
//     null or [] gives no blocks (source None: Higress also skips).
// Compat mode (BlockOptions.chatOnly): only `messages` is read, as Higress does; a body with
//   `prompt` or `input` and no `messages` has no blocks (source None), so no key is written.
// Completions (`prompt`, no Higress equivalent): a string prompt is its decoded UTF-8 bytes cut
//   into chunkBytes-sized blocks (the last one shorter), so prompts sharing their first k chunks
//   share k levels. Any other prompt (array of strings, token ids, arrays of token ids) is its
//   raw JSON text cut the same way: JSON text keeps the prefix property ([1,2,3,4] and [1,2,3,9]
//   share "[1,2,3,"), and a batch of prompts is keyed by its leading prompt.
// Responses API (`input`): optional `instructions` (string) acts as a system message. A string
//   input is chunked like a prompt, after one leading block "system:" + instructions. An array of
//   items (or a single item object) is handled like messages, with the instructions message
//   first: an item with `role` appends role ":" content (a missing content hashes as ""), any
//   other item appends type ":" + the item's raw JSON text (function calls and their outputs are
//   resent verbatim, so they key stably). Blocks close after "user" items and at the last item.
// Finer blocks (BlockOptions.everyMessage, lb_config blockBoundary: message, the default outside
//   compat mode): a block also closes after every other message/item, so a shared system prompt
//   is a level of its own. Higress's rule puts [system, user] in one block, so two conversations
//   with the same system prompt but different first questions share no key at all.
// Precedence: messages, then prompt, then input. A body with none of them: source None.
// Caps: at most maxBlocks blocks and maxHashBytes bytes fed; the block that would cross the byte
// cap and every block after it are dropped (scan.capped), never an error. (Compat mode sets both
// caps to the maximum: Higress writes every level.)
// Cost: the scan walks the parse's tape (json/tape.ts) by index and feeds views of the body, so
// it allocates nothing per message; only escaped strings are decoded, into one reused scratch.
import { JsonKind, JsonValue, tapeKind, tapeMember, tapeNext } from "../json/value";
import { JsonTape } from "../json/tape";
import { gjsonTextAt, TextSlice } from "./gjson_text";

/** Where block bytes go. feed() calls between two close()/discard() calls form one block. */
export abstract class BlockSink {
  abstract feed(data: Uint8Array, start: i32, end: i32): void;
  /** The open block is complete. */
  abstract close(): void;
  /** The open block is dropped (cap reached); the sink must forget its bytes. */
  abstract discard(): void;
}

export class BlockOptions {
  maxHashBytes: i64 = 1048576;
  maxBlocks: i32 = 64;
  /** Block size for string prompts / inputs, in UTF-8 bytes. */
  chunkBytes: i32 = 1024;
  /** Close a block after every message (not only after user messages, as Higress does). */
  everyMessage: bool = false;
  /** Read `messages` only (Higress): `prompt` / `input` bodies give no blocks. */
  chatOnly: bool = false;
}

export const enum BlockSource { None = 0, Invalid = 1, Chat = 2, Completion = 3, Responses = 4 }

export class BlockScan {
  source: BlockSource = BlockSource.None;
  blocks: i32 = 0;
  /** Blocks were dropped by maxHashBytes or maxBlocks. */
  capped: bool = false;
  bytes: i64 = 0;
}

const COLON: Uint8Array = asciiBytes(":");
const SYSTEM: Uint8Array = asciiBytes("system");
const EMPTY: Uint8Array = new Uint8Array(0);

function asciiBytes(s: string): Uint8Array {
  const b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) b[i] = <u8>s.charCodeAt(i);
  return b;
}

// Enforces the caps between the scanners and the sink, and renders values (gjson's String())
// through one reused TextSlice and scratch buffer.
class CappedWriter {
  scan: BlockScan = new BlockScan();
  private open: bool = false;
  private stopped: bool = false;
  private text: TextSlice = new TextSlice(EMPTY, 0, 0);
  private scratch: Uint8Array = EMPTY;

  constructor(public sink: BlockSink, public opts: BlockOptions, public tape: JsonTape, public src: Uint8Array) {}

  feed(data: Uint8Array, start: i32, end: i32): void {
    if (end <= start) return;
    if (this.stopped || this.scan.blocks >= this.opts.maxBlocks) { this.stop(); return; }
    const n = <i64>(end - start);
    if (this.scan.bytes + n > this.opts.maxHashBytes) { this.stop(); return; }
    this.scan.bytes += n;
    this.open = true;
    this.sink.feed(data, start, end);
  }

  feedAll(b: Uint8Array): void { this.feed(b, 0, b.length); }

  /** Feeds gjson's String() of the value at tape index `i`; true when that text is "user". */
  feedValue(i: i32): bool {
    this.scratch = gjsonTextAt(this.tape, this.src, i, this.scratch, this.text);
    const t = this.text;
    this.feed(t.bytes, t.start, t.end);
    return t.end - t.start == 4 && load<u32>(t.bytes.dataStart + <usize>t.start) == 0x72657375; // "user"
  }

  /** Feeds the value's raw JSON text. */
  feedRaw(i: i32): void {
    this.feed(this.src, this.tape.at(i + 1), this.tape.at(i + 2));
  }

  /** Feeds the value's text in chunkBytes pieces, closing a block after each. */
  feedChunked(i: i32, raw: bool): void {
    if (raw) {
      this.text.bytes = this.src; this.text.start = this.tape.at(i + 1); this.text.end = this.tape.at(i + 2);
    } else {
      this.scratch = gjsonTextAt(this.tape, this.src, i, this.scratch, this.text);
    }
    const t = this.text;
    const size = max(1, this.opts.chunkBytes);
    for (let at = t.start; at < t.end; at += size) {
      this.feed(t.bytes, at, min(at + size, t.end));
      this.close();
    }
  }

  close(): void {
    if (this.stopped || !this.open) return;
    this.open = false;
    this.sink.close();
    this.scan.blocks++;
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.scan.capped = true;
    if (this.open) { this.open = false; this.sink.discard(); }
  }
}

/** Feeds the body's blocks to `sink`; the result tells which rule applied and how many closed. */
export function scanBlocks(body: JsonValue, opts: BlockOptions, sink: BlockSink): BlockScan {
  const tape = body.tape;
  const w = new CappedWriter(sink, opts, tape, body.src);
  const root = body.index;
  const messages = tapeMember(tape, body.src, root, "messages");
  if (messages >= 0) {
    w.scan.source = chatBlocks(messages, w);
    return w.scan;
  }
  if (opts.chatOnly) return w.scan;
  const prompt = tapeMember(tape, body.src, root, "prompt");
  if (prompt >= 0 && tapeKind(tape, prompt) != JsonKind.Null) {
    w.scan.source = BlockSource.Completion;
    w.feedChunked(prompt, tapeKind(tape, prompt) != JsonKind.String);
    return w.scan;
  }
  const input = tapeMember(tape, body.src, root, "input");
  if (input >= 0 && tapeKind(tape, input) != JsonKind.Null) {
    w.scan.source = BlockSource.Responses;
    responsesBlocks(input, tapeMember(tape, body.src, root, "instructions"), w);
  }
  return w.scan;
}

// gjson's Array() as a range of tape indices [first, end): an array's elements; null gives
// none; any other value is a one-element list (itself).
class ListRange {
  first: i32 = 0;
  end: i32 = 0;
}

function listOf(tape: JsonTape, i: i32, out: ListRange): ListRange {
  const kind = tapeKind(tape, i);
  if (kind == JsonKind.Array) { out.first = i + 4; out.end = tapeNext(tape, i); }
  else if (kind == JsonKind.Null) { out.first = i; out.end = i; }
  else { out.first = i; out.end = tapeNext(tape, i); }
  return out;
}

function chatBlocks(messages: i32, w: CappedWriter): BlockSource {
  const tape = w.tape;
  const src = w.src;
  const list = listOf(tape, messages, new ListRange());
  // Higress gives up on the whole body at the first message lacking role or content.
  for (let m = list.first; m < list.end; m = tapeNext(tape, m)) {
    if (tapeMember(tape, src, m, "role") < 0 || tapeMember(tape, src, m, "content") < 0) return BlockSource.Invalid;
  }
  if (list.first >= list.end) return BlockSource.None;
  for (let m = list.first; m < list.end; m = tapeNext(tape, m)) {
    const user = w.feedValue(tapeMember(tape, src, m, "role"));
    w.feedAll(COLON);
    w.feedValue(tapeMember(tape, src, m, "content"));
    if (w.opts.everyMessage || user || tapeNext(tape, m) >= list.end) w.close();
  }
  return BlockSource.Chat;
}

function feedInstructions(instructions: i32, w: CappedWriter): bool {
  if (instructions < 0 || tapeKind(w.tape, instructions) != JsonKind.String) return false;
  w.feedAll(SYSTEM);
  w.feedAll(COLON);
  w.feedValue(instructions);
  return true;
}

function responsesBlocks(input: i32, instructions: i32, w: CappedWriter): void {
  const tape = w.tape;
  const src = w.src;
  if (tapeKind(tape, input) == JsonKind.String) {
    if (feedInstructions(instructions, w)) w.close();
    w.feedChunked(input, false);
    return;
  }
  const items = listOf(tape, input, new ListRange());
  const hadInstructions = feedInstructions(instructions, w);
  if (hadInstructions && w.opts.everyMessage) w.close();
  if (items.first >= items.end) {
    if (hadInstructions) w.close();
    return;
  }
  for (let item = items.first; item < items.end; item = tapeNext(tape, item)) {
    const role = tapeMember(tape, src, item, "role");
    let user = false;
    if (role >= 0) {
      user = w.feedValue(role);
      w.feedAll(COLON);
      const content = tapeMember(tape, src, item, "content");
      if (content >= 0) w.feedValue(content);
    } else {
      const type = tapeMember(tape, src, item, "type");
      if (type >= 0) w.feedValue(type);
      w.feedAll(COLON);
      w.feedRaw(item);
    }
    if (w.opts.everyMessage || user || tapeNext(tape, item) >= items.end) w.close();
  }
}
