// Types for scripts/lua-bundle.mjs (imported from TypeScript tests and benches).
export declare const LUA_ENTRY_SCRIPTS: readonly string[];
export declare function bundleLuaScripts(dir?: string): Record<string, { text: string; sha1: string }>;
