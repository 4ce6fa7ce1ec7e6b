// The tenant a queued request counts under (services/queue/tenant.ts): the header's value, at most
// TENANT_MAX_CHARS of it in Redis.
import { TENANT_MAX_CHARS, tenantKey } from "../services/queue/tenant";

describe("tenantKey", () => {
  it("keeps a value of up to TENANT_MAX_CHARS as it is", () => {
    expect(tenantKey("team-a")).toBe("team-a");
    const edge = "x".repeat(TENANT_MAX_CHARS);
    expect(tenantKey(edge)).toBe(edge);
    expect(tenantKey("")).toBe("");
  });
  it("makes a longer value its head and a hash of the whole: TENANT_MAX_CHARS long, two values two tenants", () => {
    const a = "y".repeat(60000) + "a";
    const b = "y".repeat(60000) + "b";
    expect(tenantKey(a).length).toBe(TENANT_MAX_CHARS);
    expect(tenantKey(a).startsWith("yyyy")).toBe(true);
    expect(tenantKey(a)).not.toBe(tenantKey(b));
    expect(tenantKey(a)).toBe(tenantKey("y".repeat(60000) + "a"));
  });
  it("never cuts a surrogate pair in two", () => {
    const v = "z".repeat(TENANT_MAX_CHARS - 18) + "😀" + "z".repeat(100);
    const k = tenantKey(v);
    expect(k.length).toBe(TENANT_MAX_CHARS - 1);
    expect(k.charCodeAt(k.length - 18)).toBe(0x7a);
  });
});
