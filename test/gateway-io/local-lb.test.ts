// The cluster's own load balancer: round robin, random, least_request (P2C on active requests).
import { describe, expect, it } from "vitest";
import { LocalLoadBalancer } from "../../host-test/gateway/local-lb.js";

const HOSTS = ["10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"];

function countPicks(lb: LocalLoadBalancer, hosts: string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const h = lb.pick(hosts)!;
    counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  return counts;
}

describe("LocalLoadBalancer", () => {
  it("returns null without hosts, for every policy", () => {
    for (const policy of ["round_robin", "least_request", "random"] as const) {
      expect(new LocalLoadBalancer(policy, 1).pick([])).toBeNull();
    }
  });

  it("round_robin visits each host in turn", () => {
    const lb = new LocalLoadBalancer("round_robin", 1);
    const picks = Array.from({ length: 7 }, () => lb.pick(HOSTS));
    expect(picks).toEqual([HOSTS[0], HOSTS[1], HOSTS[2], HOSTS[0], HOSTS[1], HOSTS[2], HOSTS[0]]);
  });

  it("random reaches every host and is reproducible for a seed", () => {
    const a = new LocalLoadBalancer("random", 42);
    const b = new LocalLoadBalancer("random", 42);
    const seqA = Array.from({ length: 50 }, () => a.pick(HOSTS));
    const seqB = Array.from({ length: 50 }, () => b.pick(HOSTS));
    expect(seqA).toEqual(seqB);
    expect(new Set(seqA).size).toBe(3);
  });

  it("least_request prefers the host with fewer active requests", () => {
    const lb = new LocalLoadBalancer("least_request", 7);
    const [busy, idle] = HOSTS as [string, string];
    for (let i = 0; i < 5; i++) lb.onStart(busy);
    const counts = countPicks(lb, [busy, idle], 2000);
    // With two choices sampled with replacement, the busy host wins only when both samples are it
    // (1 in 4); the idle host wins otherwise.
    expect(counts.get(idle)!).toBeGreaterThan(1300);
    expect(counts.get(busy) ?? 0).toBeLessThan(700);
  });

  it("least_request keeps active requests balanced when every pick starts a request", () => {
    const lb = new LocalLoadBalancer("least_request", 3);
    for (let i = 0; i < 300; i++) lb.onStart(lb.pick(HOSTS)!);
    const loads = HOSTS.map((h) => lb.activeRequests(h));
    expect(loads.reduce((x, y) => x + y)).toBe(300);
    expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(10);
  });

  it("onEnd releases a request and never goes below zero", () => {
    const lb = new LocalLoadBalancer("least_request", 1);
    lb.onStart(HOSTS[0]!);
    lb.onStart(HOSTS[0]!);
    lb.onEnd(HOSTS[0]!);
    expect(lb.activeRequests(HOSTS[0]!)).toBe(1);
    lb.onEnd(HOSTS[0]!);
    lb.onEnd(HOSTS[0]!);
    expect(lb.activeRequests(HOSTS[0]!)).toBe(0);
  });
});
