// The connection behind `proxy_redis_call`: one pipelined TCP connection per cluster client,
// emulating Envoy's Redis client (envoyproxy/envoy source/extensions/filters/network/common/redis/
// client_impl.cc) the way Higress uses it (higress-abi.md "Higress imports").
// Inputs: raw RESP query bytes from the guest; they are written as is, never interpreted.
// Output: the raw bytes of exactly ONE reply (framed by resp.ts replyLength), or null for
// NetworkError (timeout, refused/lost connection, protocol error, closed client).
// Emulated behaviour, each as Envoy's client does it:
// - Lazy connect on the first call; the connect phase is bounded by connectTimeoutMs (Envoy: the
//   cluster's connect_timeout governs until the connection is up).
// - Every NEW connection first sends `AUTH [user] pass` (when a password or user is set) and then
//   `SELECT db` (db > 0). Their replies are swallowed: Envoy hands AUTH replies to do-nothing
//   callbacks (`null_pool_callbacks`). So a wrong password does NOT fail calls as NetworkError:
//   the server's `-NOAUTH ...` error replies reach the guest with status Ok (higress-abi.md
//   "Redis errors come back as a RESP error reply with status 0"). A failing SELECT likewise
//   leaves the connection on db 0.
// - Pipelining: replies are matched to calls in FIFO order.
// - Op timeout (Envoy `onConnectOrOpTimeout`): one timer per connection, armed when the first call
//   is pending, re-armed on every reply while calls remain, disarmed when none remain. When it
//   fires, Envoy closes the connection: EVERY pending call fails (null), and the late reply dies
//   with the socket, so it can never be matched to a later call. The next call reconnects.
//   (raw_client_impl.cc, higress-group/envoy envoy-1.27: makeRawRequest L86-94, onRawResponse
//   L190-197, onConnectOrOpTimeout L99-113, onEvent L145-160.)
// - Op timeout 0 is a 0 ms timer, not "none" (AsyncClientConfig keeps milliseconds(0); Envoy's
//   TimerImpl adds it to libevent with a zero timeval: it fires on the next loop iteration). Node
//   clamps setTimeout(0) to 1 ms, which would let a fast local reply in first (kinder), so a 0 ms
//   timer is a setImmediate: it fires before the socket is read again, and every call fails.
// - Connection error/close and malformed replies (Envoy closes on ProtocolError) fail all pending
//   calls with null; the next call reconnects.
// - Write batching (Envoy raw_client_impl.cc makeRawRequest): a request is encoded into a
//   per-connection buffer; when the buffer reaches maxBufferSizeBeforeFlush bytes it is written at
//   once, otherwise the first request into an empty buffer arms a bufferFlushTimeoutMs timer that
//   writes it (0 ms: on the next event-loop turn). Envoy's defaults are 3 ms / 1024 bytes
//   (AsyncClientConfig); max 0 writes every request at once. Without the options (direct users
//   of this class) requests are written at once.
// - "Written" means handed to the connection, as Envoy's ConnectionImpl::write does it: the bytes
//   move to the connection's write buffer and the socket's write event is activated; the
//   dispatcher writes them after the current callback returns (source/common/network/
//   connection_impl.cc, ConnectionImpl::write -> file_event_->activate(Write)). So a
//   proxy_redis_call never reaches the socket inside the import, and work the guest does after
//   the call delays the request, as in Envoy. Here: setImmediate, bytes kept in order.
import net from "node:net";
import { encodeCommand, replyLength } from "../resp.js";

export interface RedisClusterClientOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** SELECTed on every new connection when > 0. */
  db?: number;
  /** Op timeout (ms): see the header comment for its exact semantics. */
  timeoutMs: number;
  /** Connect timeout (ms); defaults to timeoutMs. The gateway passes the cluster's connect_timeout_ms. */
  connectTimeoutMs?: number;
  /** Envoy buffer_flush_timeout (ms). */
  bufferFlushTimeoutMs?: number;
  /** Envoy max_buffer_size_before_flush (bytes); 0 (default here) = write at once. */
  maxBufferSizeBeforeFlush?: number;
}

interface PendingCall {
  /** null for the swallowed AUTH/SELECT replies. */
  resolve: ((reply: Buffer | null) => void) | null;
}

/** One live (or connecting) socket and the calls waiting for its replies. */
interface Connection {
  socket: net.Socket;
  ready: boolean;
  pending: PendingCall[];
  inbox: Buffer;
  timer: NodeJS.Timeout | NodeJS.Immediate | null;
  timerMs: number;
  /** Encoded requests not yet written (Envoy's encoder buffer) and its flush timer. */
  outbox: Buffer[];
  outboxBytes: number;
  flushTimer: NodeJS.Timeout | NodeJS.Immediate | null;
  /** Bytes handed to the connection, written to the socket on the next loop turn. */
  wire: Buffer[];
  wireTurn: NodeJS.Immediate | null;
}

export class RedisClusterClient {
  private conn: Connection | null = null;
  private closed = false;

  constructor(readonly opts: RedisClusterClientOptions) {}

  /** True while a TCP connection is established (not while connecting). */
  get connected(): boolean {
    return this.conn !== null && this.conn.ready;
  }

  /** Sends `query` (raw RESP) and resolves with one raw reply, or null on NetworkError. */
  call(query: Buffer): Promise<Buffer | null> {
    if (this.closed) return Promise.resolve(null);
    const conn = this.conn ?? this.connect();
    return new Promise((resolve) => {
      this.enqueue(conn, query, resolve);
    });
  }

  /** Drops the connection (pending calls resolve null); later calls resolve null at once. */
  close(): void {
    this.closed = true;
    if (this.conn) this.fail(this.conn);
  }

  private connect(): Connection {
    const socket = net.connect({ host: this.opts.host, port: this.opts.port });
    socket.setNoDelay(true); // Envoy sets TCP_NODELAY on upstream Redis connections.
    const conn: Connection = { socket, ready: false, pending: [], inbox: Buffer.alloc(0), timer: null, timerMs: 0, outbox: [], outboxBytes: 0, flushTimer: null, wire: [], wireTurn: null };
    this.conn = conn;
    this.armTimer(conn, this.opts.connectTimeoutMs ?? this.opts.timeoutMs);
    socket.on("connect", () => this.onConnected(conn));
    socket.on("data", (chunk: Buffer) => this.onData(conn, chunk));
    socket.on("error", () => this.fail(conn));
    socket.on("close", () => this.fail(conn));
    // Init commands go first on the wire; writes made before "connect" are queued in order.
    const { username, password, db } = this.opts;
    if (password || username) {
      const authArgs = username ? ["AUTH", username, password ?? ""] : ["AUTH", password ?? ""];
      this.enqueue(conn, encodeCommand(authArgs), null);
    }
    if (db && db > 0) this.enqueue(conn, encodeCommand(["SELECT", db]), null);
    return conn;
  }

  private enqueue(conn: Connection, query: Buffer, resolve: PendingCall["resolve"]): void {
    conn.pending.push({ resolve });
    // Once connected, the op timer starts with the first outstanding call (Envoy makeRequest).
    if (conn.ready && conn.pending.length === 1) this.armTimer(conn, this.opts.timeoutMs);
    const wasEmpty = conn.outboxBytes === 0;
    conn.outbox.push(query);
    conn.outboxBytes += query.length;
    if (conn.outboxBytes >= (this.opts.maxBufferSizeBeforeFlush ?? 0)) {
      this.flush(conn);
    } else if (wasEmpty) {
      const ms = this.opts.bufferFlushTimeoutMs ?? 0;
      conn.flushTimer = ms > 0 ? setTimeout(() => this.flush(conn), ms) : setImmediate(() => this.flush(conn));
    }
  }

  /** Writes the encoder buffer and disarms its timer (Envoy flushBufferAndResetTimer). */
  private flush(conn: Connection): void {
    this.clearFlushTimer(conn);
    if (conn.outboxBytes === 0 || conn.socket.destroyed) return;
    const out = conn.outbox.length === 1 ? conn.outbox[0] : Buffer.concat(conn.outbox);
    conn.outbox = [];
    conn.outboxBytes = 0;
    this.handToConnection(conn, out);
  }

  /** Envoy ConnectionImpl::write: into the write buffer now, to the socket on the next loop turn. */
  private handToConnection(conn: Connection, out: Buffer): void {
    conn.wire.push(out);
    if (conn.wireTurn !== null) return;
    conn.wireTurn = setImmediate(() => {
      conn.wireTurn = null;
      const bytes = conn.wire.length === 1 ? conn.wire[0] : Buffer.concat(conn.wire);
      conn.wire = [];
      if (!conn.socket.destroyed) conn.socket.write(bytes);
    });
  }

  private clearFlushTimer(conn: Connection): void {
    const t = conn.flushTimer;
    if (t === null) return;
    conn.flushTimer = null;
    if ("hasRef" in t && "refresh" in t) clearTimeout(t as NodeJS.Timeout); else clearImmediate(t as NodeJS.Immediate);
  }

  private onConnected(conn: Connection): void {
    if (this.conn !== conn) return;
    conn.ready = true;
    if (conn.pending.length > 0) this.armTimer(conn, this.opts.timeoutMs);
    else this.disarmTimer(conn);
  }

  private onData(conn: Connection, chunk: Buffer): void {
    if (this.conn !== conn) return;
    conn.inbox = conn.inbox.length === 0 ? chunk : Buffer.concat([conn.inbox, chunk]);
    let offset = 0;
    for (;;) {
      const length = replyLength(conn.inbox, offset);
      if (length === -1) break;
      if (length === -2 || conn.pending.length === 0) {
        // Malformed bytes, or a reply nobody asked for: the stream can no longer be trusted.
        this.fail(conn);
        return;
      }
      const call = conn.pending.shift()!;
      // Copy: the reply must not pin the (possibly large) receive buffer.
      const reply = Buffer.from(conn.inbox.subarray(offset, offset + length));
      offset += length;
      if (conn.pending.length > 0) this.armTimer(conn, this.opts.timeoutMs);
      else this.disarmTimer(conn);
      call.resolve?.(reply);
    }
    conn.inbox = offset === conn.inbox.length ? Buffer.alloc(0) : conn.inbox.subarray(offset);
  }

  /** Closes the connection and fails every pending call with NetworkError (null). Idempotent. */
  private fail(conn: Connection): void {
    if (this.conn === conn) this.conn = null;
    this.disarmTimer(conn);
    this.clearFlushTimer(conn);
    conn.outbox = [];
    conn.outboxBytes = 0;
    if (conn.wireTurn !== null) clearImmediate(conn.wireTurn);
    conn.wireTurn = null;
    conn.wire = [];
    conn.ready = false;
    conn.socket.destroy();
    const pending = conn.pending;
    conn.pending = [];
    for (const call of pending) call.resolve?.(null);
  }

  private armTimer(conn: Connection, ms: number): void {
    // Re-armed with the same duration: refresh() restarts it from now, as a new timer would.
    if (conn.timer !== null && conn.timerMs === ms && ms > 0) { (conn.timer as NodeJS.Timeout).refresh(); return; }
    this.disarmTimer(conn);
    conn.timer = ms > 0 ? setTimeout(() => this.fail(conn), ms) : setImmediate(() => this.fail(conn));
    conn.timerMs = ms;
  }

  private disarmTimer(conn: Connection): void {
    const t = conn.timer;
    conn.timer = null;
    if (t === null) return;
    if (conn.timerMs > 0) clearTimeout(t as NodeJS.Timeout); else clearImmediate(t as NodeJS.Immediate);
  }
}
