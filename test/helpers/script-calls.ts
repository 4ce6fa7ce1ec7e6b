// Recognises the plugin's Lua script calls among recorded Redis queries, however they were sent:
// FCALL of the library's function, EVALSHA of the bundle's SHA-1 or EVAL of its text (the forms
// of assembly/redis/client.ts, with the texts the build embedded: assembly/generated/lua.ts).
import * as lua from "../../assembly/generated/lua.js";

const embedded = lua as unknown as Record<string, string>;
const names = Object.keys(embedded).filter((k) => k.endsWith("_SHA")).map((k) => k.slice(0, -4));
const bySha = new Map(names.map((n) => [embedded[`${n}_SHA`], n.toLowerCase()]));
const byText = new Map(names.map((n) => [embedded[`${n}_SOURCE`], n.toLowerCase()]));
const byFunction = new Map(names.map((n) => [`${lua.LIBRARY_NAME}_${n.toLowerCase()}`, n.toLowerCase()]));

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
