// Types for scripts/lua-bundle.mjs (imported from TypeScript tests and benches).
export declare const LUA_ENTRY_SCRIPTS: readonly string[];
export declare function bundleLuaScripts(dir?: string): Record<string, { text: string; sha1: string }>;
export declare function compactLua(text: string): string;
export declare function embeddedLuaScripts(dir?: string): Record<string, { text: string; sha1: string }>;
export declare function luaLibrary(dir?: string): { name: string; text: string; functions: Record<string, string> };
export declare function libraryJoin(name: string, defs: string[], names: string[], bodies: string[]): string;
export declare function embeddedLuaParts(dir?: string): {
  defs: string[];
  names: string[];
  scripts: Record<string, { defs: number[]; body: string; text: string; sha1: string }>;
  library: { name: string; text: string; functions: Record<string, string> };
};
