// prefix_cache settings (lb_config keys). Defaults are documented in README ("prefix_cache").
import { ConfigReader, describeText } from "./reader";

export const PREFIX_KEYS: string[] = ["redisKeyTTL", "compat", "orderSensitive", "namespaceByModel",
  "maxHashBytes", "loadGateAbs", "loadGateRel", "loadGateCap", "promptChunkBytes", "maxPrefixLevels", "blockBoundary"];

export class PrefixSettings {
  keyTtlSeconds: i64 = 1800;
  /** Higress-compatible bare keys (no namespace), for fleets that mix both plugins. */
  compat: bool = false;
  /** Salt each block hash with its position so swapped or repeated blocks cannot collide. */
  orderSensitive: bool = false;
  namespaceByModel: bool = true;
  maxHashBytes: i64 = 1048576;
  /** Leave the affinity host when its load > min + abs AND > rel x min ... */
  gateAbs: i64 = 8;
  gateRel: f64 = 1.5;
  /** ... or when its load >= cap (0 = no cap). */
  gateCap: i64 = 0;
  /** Block size for string `prompt` / Responses `input` (chat blocks are whole user turns). */
  promptChunkBytes: i64 = 1024;
  /** "message": a block closes after every message (a shared system prompt is its own level);
   *  "user": Higress's rule (after user messages only). compat implies "user". */
  blockBoundary: string = "message";
  /** Deepest level looked up and written: bounds the Redis work per request (one GET/SET per level). */
  maxLevels: i64 = 64;
}

export function parsePrefixSettings(r: ConfigReader): PrefixSettings {
  const s = new PrefixSettings();
  // Higress: 0 or missing means 1800 s.
  const ttl = r.int("redisKeyTTL", 1800, 0, 31536000, "seconds");
  s.keyTtlSeconds = ttl == 0 ? 1800 : ttl;
  s.compat = r.bool("compat", false);
  s.orderSensitive = r.bool("orderSensitive", false);
  if (s.compat && s.orderSensitive) r.errors.add(r.key("orderSensitive") + " must be false when compat is true (Higress keys are not position-salted), got true");
  s.namespaceByModel = r.bool("namespaceByModel", true);
  s.maxHashBytes = r.int("maxHashBytes", 1048576, 64, 1073741824);
  s.gateAbs = r.int("loadGateAbs", 8, 0, 1000000);
  s.gateRel = r.num("loadGateRel", 1.5, 1.0, 1000.0);
  s.gateCap = r.int("loadGateCap", 0, 0, 1000000);
  s.promptChunkBytes = r.int("promptChunkBytes", 1024, 16, 1048576);
  s.maxLevels = r.int("maxPrefixLevels", 64, 1, 256); // prefix.lua's cap: 256 levels run ~2 ms in Redis
  s.blockBoundary = r.choice("blockBoundary", s.compat ? "user" : "message", ["message", "user"]);
  if (s.compat && s.blockBoundary != "user") r.errors.add(r.key("blockBoundary") + " must be user when compat is true (Higress closes blocks at user messages only), got " + describeText(s.blockBoundary));
  return s;
}
