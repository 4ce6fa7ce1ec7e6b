// `_rules_` selection through the local gateway running the built plugin: the rule is matched on
// what Envoy gives the filter (route name, :authority as sent, the route's cluster name), so
// each request below reaches exactly the rule Higress's SDK matcher would pick. Every rule uses
// the header test policy with its own debugHeader, so the response names the config that ran.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Gateway } from "../../host-test/gateway/server.js";
import { startUpstream, type Upstream } from "../helpers/upstreams.js";
import { gatewayConfig, request } from "../gateway/gateway-helpers.js";

const CHAT = "outbound|8000||chat.svc";
const EMBED = "outbound|9000||embed.svc";
let chat: Upstream, embed: Upstream;
let gw: Gateway;

const rule = (match: Record<string, unknown>, name: string) =>
  ({ ...match, lb_policy: "header", lb_config: { debugHeader: `x-rule-${name}` } });

beforeAll(async () => {
  chat = await startUpstream();
  embed = await startUpstream();
  gw = await startGateway(gatewayConfig({
    clusters: [{ name: CHAT, endpoints: [chat.address] }, { name: EMBED, endpoints: [embed.address] }],
    routes: [
      { name: "ai-chat", match: { prefix: "/chat" }, cluster: CHAT },
      { name: "ai-embed", match: { prefix: "/embed" }, cluster: EMBED },
      { name: "other", match: { prefix: "/" }, cluster: CHAT },
    ],
    plugin: {
      wasm: "build/ai-load-balancer.wasm",
      configuration: {
        lb_policy: "header", lb_config: { debugHeader: "x-rule-top" },
        _rules_: [
          rule({ _match_route_: ["ai-chat"], _match_service_: ["embed.svc"] }, "route-and-service"),
          rule({ _match_domain_: ["*.example.com"], _match_service_: ["embed.svc"] }, "domain"),
          rule({ _match_service_: ["embed.svc:9000"] }, "service"),
          rule({ _match_route_prefix_: ["ai-"] }, "prefix"),
        ],
      },
    },
  }));
});
afterAll(async () => {
  await gw?.close();
  await chat?.close();
  await embed?.close();
});

/** Which config ran: the name in the debug header the plugin set (the header policy names the
 *  pod asked for in x-llmlb-endpoint). */
async function ruleFor(path: string, host: string): Promise<string> {
  const pod = path.startsWith("/embed") ? embed.address : chat.address;
  const res = await request(gw.url, { method: "POST", path, headers: { host, "x-llmlb-endpoint": pod, "content-type": "application/json" }, body: "{}" });
  expect(res.status).toBe(200);
  const names = Object.keys(res.headers).filter((h) => h.startsWith("x-rule-"));
  expect(names.length).toBe(1);
  return names[0].slice("x-rule-".length);
}

describe("_rules_ through the gateway", () => {
  it("route AND service needs both; a domain rule ignores its service list", async () => {
    // ai-chat's cluster is chat.svc: rule 1 fails, rule 2's domain matches (its service is ignored).
    expect(await ruleFor("/chat", "a.example.com")).toBe("domain");
  });
  it("domains are case-sensitive and the port is stripped", async () => {
    expect(await ruleFor("/chat", "A.EXAMPLE.COM")).toBe("prefix");
    expect(await ruleFor("/chat", `b.example.com:${new URL(gw.url).port}`)).toBe("domain");
  });
  it("service fqdn:port matches the route's cluster name", async () => {
    expect(await ruleFor("/embed", "localhost")).toBe("service");
  });
  it("route prefix matches the route name", async () => {
    expect(await ruleFor("/chat", "localhost")).toBe("prefix");
  });
  it("no rule matches: the top-level config", async () => {
    expect(await ruleFor("/x", "localhost")).toBe("top");
  });
  it("an ignored matcher is named in one warning line per VM", () => {
    const warnings = (gw.plugin?.logs.records ?? []).filter((r) => r.level === "warn" && r.message.includes("configuration accepted with warnings: "));
    expect(warnings.length).toBe(1);
    expect(warnings[0].message).toContain("_rules_[1]._match_service_ is ignored: this rule matches by _match_domain_");
  });
});
