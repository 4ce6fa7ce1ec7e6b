// Recognises the plugin's Lua script calls among recorded Redis queries, however they were sent:
// FCALL of the library's function, EVALSHA of the script's SHA-1 or EVAL of its text (the forms
// of assembly/redis/client.ts). Texts, SHA-1s and the library's name come from lua-bundle.mjs's
// embeddedLuaParts, from which the build generates what the plugin embeds (scripts/build.mjs), and
// whose joins the plugin repeats (assembly/services/lease/lua_text.ts; a text that differed would
// not be recognised here, and FUNCTION LOAD's is compared whole in test/plugin/redis-functions).
import { embeddedLuaParts } from "../../scripts/lua-bundle.mjs";

const parts = embeddedLuaParts();
const names = parts.names;
const bySha = new Map(names.map((n) => [parts.scripts[n].sha1, n]));
const byText = new Map(names.map((n) => [parts.scripts[n].text, n]));
const byFunction = new Map(names.map((n) => [parts.library.functions[n], n]));

/** The function library's name (FUNCTION LIST shows it). */
export const LIBRARY_NAME = parts.library.name;

/** The texts the plugin sends: each script's EVAL text, and FUNCTION LOAD's library. */
export const SCRIPT_TEXTS: Record<string, string> = Object.fromEntries(names.map((n) => [n, parts.scripts[n].text]));
export const LIBRARY_TEXT = parts.library.text;

/** The script a command (verb first) runs, by its name in lua/ ("acquire"); null otherwise. */
export function scriptOf(command: string[]): string | null {
  if (command.length < 3) return null;
  const verb = command[0].toUpperCase();
  if (verb === "FCALL") return byFunction.get(command[1]) ?? null;
  if (verb === "EVALSHA") return bySha.get(command[1].toLowerCase()) ?? null;
  if (verb === "EVAL") return byText.get(command[1]) ?? null;
  return null;
}

/** Whether a recorded query's text is a script call of any form (a quick check on the verb). */
export function isScriptQuery(text: string): boolean {
  return /\r\n(FCALL|EVALSHA|EVAL)\r\n/i.test(text);
}
