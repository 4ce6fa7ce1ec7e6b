// Upstream host parsing (Higress pair map of ip:port -> JSON), candidate sets, local least request,
// the pair-map codec and the circuit breaker.
import { Pair, serializePairs, deserializePairs } from "../host/pairs";
import { parseUpstreamHosts } from "../services/candidates/upstream_hosts";
import { CandidateCache, makeCandidateSet } from "../services/candidates/candidates";
import { LocalLeastRequest } from "../services/candidates/local_least";
import { CircuitBreaker } from "../redis/breaker";
import { Xorshift } from "../util/prng";

describe("pair maps", () => {
  it("round-trips, with UTF-8 and empty values", () => {
    const pairs: Pair[] = [new Pair(":path", "/v1/chat"), new Pair("x-é", ""), new Pair("", "v")];
    const back = deserializePairs(serializePairs(pairs));
    expect(back.length).toBe(3);
    expect(back[0].key).toBe(":path");
    expect(back[0].value).toBe("/v1/chat");
    expect(back[1].key).toBe("x-é");
    expect(back[1].value).toBe("");
    expect(back[2].value).toBe("v");
  });
  it("golden bytes: one pair a=bc", () => {
    const b = Uint8Array.wrap(serializePairs([new Pair("a", "bc")]));
    const expected: u8[] = [1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0x61, 0, 0x62, 0x63, 0];
    expect(b.length).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) expect(b[i]).toBe(expected[i]);
  });
  it("stops at truncated input instead of reading past it", () => {
    const b = serializePairs([new Pair("key", "value"), new Pair("k2", "v2")]);
    expect(deserializePairs(b.slice(0, b.byteLength - 3)).length).toBe(1);
    expect(deserializePairs(new ArrayBuffer(2)).length).toBe(0);
  });
});

function hostsBuffer(entries: string[][]): ArrayBuffer {
  const pairs = new Array<Pair>();
  for (let i = 0; i < entries.length; i++) pairs.push(new Pair(entries[i][0], entries[i][1]));
  return serializePairs(pairs);
}

describe("upstream hosts", () => {
  it("reads address and health_status without decoding metrics", () => {
    const snap = parseUpstreamHosts(hostsBuffer([
      ["10.0.0.1:8000", `{"health_status":"Healthy","metrics":"vllm:x 1\\n\\"health_status\\":\\"Unhealthy\\""}`],
      ["10.0.0.2:8000", `{"metrics":"", "health_status" : "Unhealthy"}`],
      ["10.0.0.3:8000", `{}`],
    ]));
    expect(snap.hosts.length).toBe(3);
    expect(snap.hosts[0].address).toBe("10.0.0.1:8000");
    expect(snap.hosts[0].health).toBe("Healthy");
    expect(snap.hosts[1].health).toBe("Unhealthy");
    expect(snap.hosts[2].health).toBe("");
  });

  it("candidates: allowed health only, sorted, fingerprint changes with the set, cached", () => {
    const cache = new CandidateCache();
    const a = cache.fromSnapshot(parseUpstreamHosts(hostsBuffer([
      ["10.0.0.2:1", `{"health_status":"Healthy"}`], ["10.0.0.1:1", `{"health_status":"Healthy"}`],
      ["10.0.0.3:1", `{"health_status":"Degraded"}`]])), ["Healthy"]);
    expect(a.hosts.join(",")).toBe("10.0.0.1:1,10.0.0.2:1");
    expect(a.has("10.0.0.2:1")).toBe(true);
    expect(a.has("10.0.0.3:1")).toBe(false);
    const same = cache.fromSnapshot(parseUpstreamHosts(hostsBuffer([
      ["10.0.0.2:1", `{"health_status":"Healthy"}`], ["10.0.0.1:1", `{"health_status":"Healthy"}`]])), ["Healthy"]);
    expect(same).toBe(a);
    const withDegraded = cache.fromSnapshot(parseUpstreamHosts(hostsBuffer([
      ["10.0.0.2:1", `{"health_status":"Healthy"}`], ["10.0.0.1:1", `{"health_status":"Healthy"}`],
      ["10.0.0.3:1", `{"health_status":"Degraded"}`]])), ["Healthy", "Degraded"]);
    expect(withDegraded.size).toBe(3);
    expect(withDegraded.fp).not.toBe(a.fp);
  });

  it("a static list is deduplicated and order-independent", () => {
    const x = makeCandidateSet(["b:1", "a:1", "b:1"]);
    const y = makeCandidateSet(["a:1", "b:1"]);
    expect(x.size).toBe(2);
    expect(x.fp).toBe(y.fp);
  });
});

describe("local least request", () => {
  it("picks the least loaded and spreads ties", () => {
    const lb = new LocalLeastRequest();
    const c = makeCandidateSet(["a:1", "b:1", "c:1"]);
    const rng = new Xorshift(42);
    lb.acquire("a:1", 5);
    lb.acquire("b:1", 1);
    expect(lb.pick(c, rng)).toBe("c:1");
    lb.acquire("c:1", 1);
    let seenB = 0;
    let seenC = 0;
    for (let i = 0; i < 200; i++) {
      const h = lb.pick(c, rng);
      if (h == "b:1") seenB++;
      if (h == "c:1") seenC++;
    }
    expect(seenB + seenC).toBe(200);
    expect(seenB).toBeGreaterThan(50);
    expect(seenC).toBeGreaterThan(50);
    lb.release("a:1", 5);
    expect(lb.load("a:1")).toBe(0);
    expect(lb.pick(c, rng)).toBe("a:1");
  });
});

describe("circuit breaker", () => {
  it("opens after the threshold, probes once, closes on success, backs off on failed probes", () => {
    const b = new CircuitBreaker(3, 1000);
    b.onFailure(0); b.onFailure(0);
    expect(b.allow(0)).toBe(true);
    b.onFailure(0);
    expect(b.allow(10)).toBe(false);
    expect(b.allow(1001)).toBe(true);   // the probe
    expect(b.allow(1002)).toBe(false);  // only one probe at a time
    b.onFailure(1003);                  // failed probe: open for 2 x 1000
    expect(b.allow(2500)).toBe(false);
    expect(b.allow(3004)).toBe(true);
    b.onSuccess();
    expect(b.allow(3005)).toBe(true);
    expect(b.allow(3006)).toBe(true);
  });
});
