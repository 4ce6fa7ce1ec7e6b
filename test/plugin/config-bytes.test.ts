// The configuration reaches proxy_on_configure as bytes (Envoy source/extensions/common/wasm/
// plugin.cc anyToBytes: a BytesValue as it is, so not always UTF-8). An invalid sequence inside a
// JSON string must stay inside that string: the SDK's String.UTF8.decode took the byte after a lone
// lead byte with it, a closing quote included, and the document then read as another one.
import { describe, expect, it } from "vitest";
import { TestHost } from "../../host-test/facade/index.js";

const WASM = "build/ai-load-balancer.wasm";

describe("configuration bytes that are not UTF-8", () => {
  it("a lone lead byte before a closing quote: the document keeps its structure", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"lb_policy":"endpoint_metrics","lb_config":{"loraAdapters":["a'),
      Buffer.from([0xc3]),
      Buffer.from('","b"],"metric_policy":"default"}}'),
    ]);
    const h = await TestHost.create({ wasm: WASM, configuration: bytes, logLevel: "info" });
    try {
      expect(h.vms.some((v) => v.failed)).toBe(false);
      expect(h.logMessages("warn")).toEqual([]);
      expect(h.configured).toEqual([true]);
    } finally {
      h.close();
    }
  });

  it("invalid UTF-8 in a value is refused by its key, shown as U+FFFD", async () => {
    const bytes = Buffer.concat([Buffer.from('{"lb_policy":"endpoint_metrics","lb_config":{"metric_policy":"x'), Buffer.from([0xff, 0xc3]), Buffer.from('"}}')]);
    const h = await TestHost.create({ wasm: WASM, configuration: bytes, logLevel: "info" });
    try {
      expect(h.configured).toEqual([false]);
      expect(h.logMessages("warn")).toEqual(["[ai-load-balancer] invalid configuration: lb_config.metric_policy must be one of default, least, most, got 'x\uFFFD\uFFFD'"]);
    } finally {
      h.close();
    }
  });
});
