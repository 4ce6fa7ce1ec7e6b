// Test helpers: read a fetch Response as Server-Sent Events (strictly: every event must be one
// `data: ` line followed by a blank line), and read Prometheus sample values from /metrics text.

export interface SseEvents {
  /** Parsed JSON payloads, in order (the final `[DONE]` excluded). */
  payloads: any[];
  /** Raw data strings, in order, including `[DONE]`. */
  raw: string[];
}

export async function readSse(response: Response): Promise<SseEvents> {
  const text = await response.text();
  if (!text.endsWith("\n\n")) throw new Error(`SSE stream does not end with a blank line: ${JSON.stringify(text.slice(-40))}`);
  const blocks = text.slice(0, -2).split("\n\n");
  const raw = blocks.map((block) => {
    if (!block.startsWith("data: ") || block.includes("\n")) throw new Error(`malformed SSE event: ${JSON.stringify(block)}`);
    return block.slice("data: ".length);
  });
  const payloads = raw.filter((data) => data !== "[DONE]").map((data) => JSON.parse(data));
  return { payloads, raw };
}

/** Value of the first sample named `name` (labels ignored unless `labelFilter` is given). */
export function metricValue(text: string, name: string, labelFilter?: string): number | null {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([^{\s]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (labelFilter && !(match[2] ?? "").includes(labelFilter)) continue;
    return Number(match[3]);
  }
  return null;
}

export async function fetchMetrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  return response.text();
}
