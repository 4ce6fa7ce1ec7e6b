// endpoint_hash's session keys: Higress's layout in compat mode (FNV-1a-32, Go's %08x), ours in the
// pool's hash tag otherwise.
import { stickyKey } from "../policy/endpoint_hash/sticky_key";
import { utf8Encode } from "../util/utf8";

describe("endpoint_hash keys", () => {
  it("compat: higress:endpoint_hash_table:<route>:<cluster>:<fnv32a %08x>", () => {
    expect(stickyKey(true, "llm", "outbound|8000||vllm.static", "{llmlb:llm:x}", utf8Encode("foobar")))
      .toBe("higress:endpoint_hash_table:llm:outbound|8000||vllm.static:bf9cf968");
  });
  it("namespaced: inside the pool's hash tag, 64-bit", () => {
    expect(stickyKey(false, "llm", "c", "{llmlb:llm:c}", utf8Encode("foobar"))).toBe("{llmlb:llm:c}:s:85944171f73967e8");
  });
});
