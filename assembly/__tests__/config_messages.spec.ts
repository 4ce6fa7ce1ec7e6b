// What a refusal shows: the key's path and enough of the value to find it, never a secret and
// never a log line of unbounded size (the message goes to Envoy's log at Critical).
import { parsePluginConfig } from "../config/rules";

function error(json: string): string {
  const r = parsePluginConfig(json);
  expect(r.config).toBeNull(json);
  return r.error;
}

const GLR = `{"lb_policy":"global_least_request","lb_config":{"serviceFQDN":"r","servicePort":1,`;

describe("a refusal never shows a header value", () => {
  it("a header-name key holding a header line shows the text up to the first character not allowed", () => {
    const e = error(GLR + `"debugHeader":"Authorization: Bearer sk-live-123"}}`);
    expect(e).toBe("lb_config.debugHeader must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'Authorization' followed by ':' (the rest not shown)");
    const v = error(GLR + `"priorityHeader":"Bearer sk-live-123"}}`);
    expect(v.includes("sk-live-123")).toBe(false, v);
    const c = error(`{"lb_type":"cluster","lb_policy":"cluster_hash","lb_config":{"clusters":[{"cluster":"a","weight":100}],"hash_header":"x-key\\r\\nsk-live-123"}}`);
    expect(c).toBe("lb_config.hash_header must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~), got 'x-key' followed by '\\r' (the rest not shown)");
  });

  it("a priority value of the wrong type is refused without showing it (it may be a token)", () => {
    expect(error(GLR + `"highPriorityValue":918273645}}`))
      .toBe("lb_config.highPriorityValue must be a string (quote it in YAML), got a number (value not shown)");
    expect(error(GLR + `"lowPriorityValue":[918273645]}}`))
      .toBe("lb_config.lowPriorityValue must be a string (quote it in YAML), got an array (value not shown)");
  });
});

describe("a refusal is one line of bounded size", () => {
  it("a long value or key is cut, its length named", () => {
    let long = "";
    for (let i = 0; i < 20000; i++) long += "k";
    const k = error(GLR + `"` + long + `":1}}`);
    expect(k.length < 200).toBe(true, k);
    expect(k.includes("(20000 characters)")).toBe(true, k);
    expect(k.endsWith(" is not a known key")).toBe(true, k);
    const v = error(GLR + `"costMode":"` + long + `"}}`);
    expect(v.length < 200).toBe(true, v);
    expect(v.startsWith("lb_config.costMode must be one of count, bytes, tokens, got 'kkkk")).toBe(true, v);
  });

  it("a cut never splits a character written as a surrogate pair", () => {
    let long = "";
    for (let i = 0; i < 200; i++) long += "\u{1F600}";
    const e = error(GLR + `"costMode":"` + long + `"}}`);
    for (let i = 0; i < e.length; i++) {
      const c = e.charCodeAt(i);
      if (c >= 0xD800 && c < 0xDC00) expect(e.charCodeAt(i + 1) >= 0xDC00 && e.charCodeAt(i + 1) < 0xE000).toBe(true, "lone high surrogate at " + i.toString());
      if (c >= 0xDC00 && c < 0xE000) expect(i > 0 && e.charCodeAt(i - 1) >= 0xD800 && e.charCodeAt(i - 1) < 0xDC00).toBe(true, "lone low surrogate at " + i.toString());
    }
  });
});

describe("the warning line of an accepted configuration", () => {
  it("names every warning up to ten, then how many more", () => {
    let rules = "";
    for (let i = 0; i < 300; i++) rules += (i > 0 ? "," : "") + `{"_match_route_":["r` + i.toString() + `"],"_match_domain_":["d"],"lb_policy":"endpoint_metrics"}`;
    const r = parsePluginConfig(`{"_rules_":[` + rules + `]}`);
    expect(r.error).toBe("");
    const line = r.warningLine();
    expect(line.startsWith("configuration accepted with warnings: _rules_[0]._match_domain_ is ignored")).toBe(true, line);
    expect(line.endsWith("; and 290 more")).toBe(true, line);
    expect(line.length < 2048).toBe(true, line.length.toString());
    expect(parsePluginConfig(`{"lb_policy":"endpoint_metrics"}`).warningLine()).toBe("");
  });
});
