// Shared setup for gateway tests: a YAML config built from parts (parsed by the real config
// loader), an HTTP client that reads the response incrementally, and plugin-log helpers.
import http from "node:http";
import { stringify } from "yaml";
import { parseGatewayConfig, type GatewayConfig } from "../../host-test/gateway/config.js";
import type { Gateway } from "../../host-test/gateway/server.js";

export function gatewayConfig(doc: Record<string, unknown>): GatewayConfig {
  return parseGatewayConfig(stringify({ listener: { port: 0 }, admin: { port: 0 }, ...doc }), process.cwd());
}

export interface ClientResult { status: number; headers: http.IncomingHttpHeaders; body: string }

export function request(url: string, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(opts.path ?? "/", url);
    const req = http.request(u, { method: opts.method ?? "GET", headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A stream context: context ids are per VM, so the VM index is part of the identity. */
export interface StreamRef { vm: number; ctx: number }

/** The end-of-stream callbacks that ran for one stream, from the scripted guest's logs. */
export function endCallbacks(gw: Gateway, ref: StreamRef): string[] {
  return messages(gw, ref.vm)
    .filter((m) => /^(done|log|delete) ctx=(\d+)/.test(m) && Number(m.match(/ctx=(\d+)/)![1]) === ref.ctx)
    .map((m) => m.split(" ")[0]);
}

/** The most recently created stream context (from the guest's "create" log line). */
export function lastStream(gw: Gateway): StreamRef {
  const created = (gw.plugin?.logs.records ?? []).filter((r) => r.message.startsWith("create ctx=") && !r.message.endsWith("parent=0"));
  const last = created[created.length - 1];
  return { vm: last.vm, ctx: Number(last.message.match(/ctx=(\d+)/)![1]) };
}

export function messages(gw: Gateway, vm?: number): string[] {
  return (gw.plugin?.logs.records ?? []).filter((r) => vm === undefined || r.vm === vm).map((r) => r.message);
}
