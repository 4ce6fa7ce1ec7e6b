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
// cap and every block after it are dropped (scan.capped), never an error.
import { JsonValue } from "../json/value";
import { gjsonText, TextSlice } from "./gjson_text";

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
const USER: Uint8Array = asciiBytes("user");
const SYSTEM: Uint8Array = asciiBytes("system");

function asciiBytes(s: string): Uint8Array {
  const b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) b[i] = <u8>s.charCodeAt(i);
  return b;
}

// Enforces the caps between the scanners and the sink.
class CappedWriter {
  scan: BlockScan = new BlockScan();
  private open: bool = false;
  private stopped: bool = false;

  constructor(public sink: BlockSink, public opts: BlockOptions) {}

  feed(data: Uint8Array, start: i32, end: i32): void {
    if (end <= start) return;
    if (this.stopped || this.scan.blocks >= this.opts.maxBlocks) { this.stop(); return; }
    const n = <i64>(end - start);
    if (this.scan.bytes + n > this.opts.maxHashBytes) { this.stop(); return; }
    this.scan.bytes += n;
    this.open = true;
    this.sink.feed(data, start, end);
  }

  feedText(t: TextSlice): void { this.feed(t.bytes, t.start, t.end); }

  feedAll(b: Uint8Array): void { this.feed(b, 0, b.length); }

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
  const w = new CappedWriter(sink, opts);
  const messages = body.get("messages");
  if (messages !== null) {
    w.scan.source = chatBlocks(messages, w);
    return w.scan;
  }
  const prompt = body.get("prompt");
  if (prompt !== null && !prompt.isNull()) {
    w.scan.source = BlockSource.Completion;
    chunkText(prompt.isString() ? gjsonText(prompt) : rawText(prompt), w);
    return w.scan;
  }
  const input = body.get("input");
  if (input !== null && !input.isNull()) {
    w.scan.source = BlockSource.Responses;
    responsesBlocks(input, body.get("instructions"), w);
  }
  return w.scan;
}

function rawText(v: JsonValue): TextSlice {
  return new TextSlice(v.src, v.rawStart, v.rawEnd);
}

// gjson's Array(): an array's elements; null gives none; any other value is a one-element list.
function asList(v: JsonValue): JsonValue[] {
  if (v.isArray()) return v.arr();
  if (v.isNull()) return new Array<JsonValue>(0);
  return [v];
}

function isUser(t: TextSlice): bool {
  if (t.end - t.start != 4) return false;
  for (let i = 0; i < 4; i++) if (t.bytes[t.start + i] != USER[i]) return false;
  return true;
}

function chatBlocks(messages: JsonValue, w: CappedWriter): BlockSource {
  const list = asList(messages);
  // Higress gives up on the whole body at the first message lacking role or content.
  for (let i = 0; i < list.length; i++) {
    if (list[i].get("role") === null || list[i].get("content") === null) return BlockSource.Invalid;
  }
  if (list.length == 0) return BlockSource.None;
  const last = list.length - 1;
  for (let i = 0; i <= last; i++) {
    const role = gjsonText(list[i].get("role")!);
    w.feedText(role);
    w.feedAll(COLON);
    w.feedText(gjsonText(list[i].get("content")!));
    if (w.opts.everyMessage || isUser(role) || i == last) w.close();
  }
  return BlockSource.Chat;
}

function chunkText(t: TextSlice, w: CappedWriter): void {
  const size = max(1, w.opts.chunkBytes);
  for (let at = t.start; at < t.end; at += size) {
    w.feed(t.bytes, at, min(at + size, t.end));
    w.close();
  }
}

function feedInstructions(instructions: JsonValue | null, w: CappedWriter): bool {
  if (instructions === null || !instructions.isString()) return false;
  w.feedAll(SYSTEM);
  w.feedAll(COLON);
  w.feedText(gjsonText(instructions));
  return true;
}

function responsesBlocks(input: JsonValue, instructions: JsonValue | null, w: CappedWriter): void {
  if (input.isString()) {
    if (feedInstructions(instructions, w)) w.close();
    chunkText(gjsonText(input), w);
    return;
  }
  const items = asList(input);
  const hadInstructions = feedInstructions(instructions, w);
  if (hadInstructions && w.opts.everyMessage) w.close();
  if (items.length == 0) {
    if (hadInstructions) w.close();
    return;
  }
  const last = items.length - 1;
  for (let i = 0; i <= last; i++) {
    const item = items[i];
    const role = item.get("role");
    let user = false;
    if (role !== null) {
      const r = gjsonText(role);
      user = isUser(r);
      w.feedText(r);
      w.feedAll(COLON);
      const content = item.get("content");
      if (content !== null) w.feedText(gjsonText(content));
    } else {
      const type = item.get("type");
      if (type !== null) w.feedText(gjsonText(type));
      w.feedAll(COLON);
      w.feedText(rawText(item));
    }
    if (w.opts.everyMessage || user || i == last) w.close();
  }
}
