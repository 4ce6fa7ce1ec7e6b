// Local replies once the response has started, and a filter's second local reply (Envoy
// filter_manager.cc DownstreamFilterManager::sendLocalReply; wasm context.cc sendLocalResponse).
import { beforeAll, describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";
import { buildGuest } from "./guests/build.js";

let g: string;
beforeAll(async () => { g = await buildGuest("scripted-100"); });
const clusters = { "outbound|8000||vllm.static": [{ address: "10.0.0.1:8000" }] };
const count = (h: TestHost, prefix: string) => h.logMessages().filter((m) => m.startsWith(prefix)).length;

describe("local replies", () => {
  it("a reply while the filter holds the upstream's response headers goes straight downstream, past the filter", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = h.stream({ headers: { "x-resp-action": "local" } });
    s.sendRequestHeaders(true);
    s.sendResponseHeaders({ ":status": "200" }, false);
    expect(s.response.status).toBe(500);
    expect(s.response.body.toString()).toBe("response replaced");
    expect(s.response.headers).toMatchObject({ "x-local": "yes" });
    expect(s.response.headers["x-filtered"]).toBeUndefined(); // the filter's response callbacks did not run again
    expect(count(h, "response_headers")).toBe(1);
    expect(count(h, "response_body")).toBe(0);
    s.sendResponseBody("upstream body", true); // the upstream's rest is dropped
    expect(s.response.body.toString()).toBe("response replaced");
    s.complete();
    expect(h.logMessages().some((m) => m.startsWith("log ctx=") && m.includes("code=500"))).toBe(true);
  });

  it("a filter's second send_local_response is ignored (Ok): the first reply is sent, no reset", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = h.stream({ headers: { "x-headers-action": "local-twice" } });
    s.sendRequestHeaders(true);
    expect(h.logMessages()).toContain("local status=0 second=0");
    expect(s.resetReason).toBeNull();
    expect(s.response.status).toBe(403);
    expect(s.response.body.toString()).toBe("denied");
  });

  it("the details' blanks become underscores (Envoy StringUtil::replaceAllEmptySpace)", async () => {
    const h = await TestHost.create({ wasm: g, clusters });
    const s = h.stream({ headers: { "x-headers-action": "local-details", "x-details": "too many\trequests now" } });
    s.sendRequestHeaders(true);
    expect(s.localResponse?.details).toBe("too_many_requests_now");
  });
});
