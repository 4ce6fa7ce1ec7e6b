// OpenAI-compatible wire shapes as vLLM emits them: request parsing for /v1/chat/completions and
// /v1/completions, stream chunks, full responses, usage, and error bodies.
// Streaming follows vLLM: chat starts with a delta.role="assistant" chunk (sent with the first
// token), one chunk per token, the LAST token's chunk carries finish_reason, then (with
// stream_options.include_usage) a chunk with `choices: []` and usage, then `data: [DONE]`.
// Failure behaviour: parseGenerationRequest returns { ok: false, message } for bad input.
import { chatToPrompt, type ChatMessage } from "./tokenizer.js";
import type { RequestResult } from "./request.js";

export type GenerationKind = "chat" | "completion";

export interface GenerationRequest {
  kind: GenerationKind;
  /** null = the served base model. */
  model: string | null;
  promptText: string;
  maxTokens: number | null;
  ignoreEos: boolean;
  stream: boolean;
  includeUsage: boolean;
}

export type ParseResult = { ok: true; request: GenerationRequest } | { ok: false; message: string };

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseMaxTokens(body: Json): number | null | string {
  const raw = body.max_completion_tokens ?? body.max_tokens;
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 1) return `max_tokens must be an integer >= 1, got ${JSON.stringify(raw)}`;
  return raw;
}

function completionPromptText(prompt: unknown): string | null {
  if (typeof prompt === "string") return prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === "string") return prompt[0];
  // A token-id list: each id is one token.
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => typeof t === "number")) return prompt.join(" ");
  return null;
}

/** Whether a request body asks for the usage chunk of a stream (`stream_options.include_usage`). */
export function wantsUsage(body: unknown): boolean {
  return isObject(body) && isObject(body.stream_options) && body.stream_options.include_usage === true;
}

export function parseGenerationRequest(kind: GenerationKind, body: unknown): ParseResult {
  if (!isObject(body)) return { ok: false, message: "request body must be a JSON object" };
  let promptText: string;
  if (kind === "chat") {
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0) return { ok: false, message: "messages must be a non-empty array" };
    if (!messages.every((m) => isObject(m) && typeof m.role === "string")) return { ok: false, message: "every message needs a string role" };
    promptText = chatToPrompt(messages as ChatMessage[]);
  } else {
    const text = completionPromptText(body.prompt);
    if (text === null) return { ok: false, message: "prompt must be a string, a one-string array, or a token-id array" };
    promptText = text;
  }
  const maxTokens = parseMaxTokens(body);
  if (typeof maxTokens === "string") return { ok: false, message: maxTokens };
  if (body.model !== undefined && typeof body.model !== "string") return { ok: false, message: "model must be a string" };
  return {
    ok: true,
    request: {
      kind,
      model: typeof body.model === "string" ? body.model : null,
      promptText,
      maxTokens,
      ignoreEos: body.ignore_eos === true,
      stream: body.stream === true,
      includeUsage: wantsUsage(body),
    },
  };
}

export function usageOf(result: RequestResult): Usage {
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.outputTokens,
    total_tokens: result.promptTokens + result.outputTokens,
    prompt_tokens_details: { cached_tokens: result.cachedTokens },
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: "BadRequestError",
  404: "NotFoundError",
  429: "RateLimitError",
  500: "InternalServerError",
  503: "ServiceUnavailableError",
};

/** OpenAI-style error body. */
export function errorBody(status: number, message: string): { error: { message: string; type: string; param: null; code: number } } {
  return { error: { message, type: ERROR_TYPES[status] ?? "APIError", param: null, code: status } };
}

/** Builds the JSON objects of one response (stream chunks or the full body). */
export class ResponseShapes {
  private readonly object: string;

  constructor(
    readonly kind: GenerationKind,
    readonly id: string,
    readonly model: string,
    readonly created: number,
  ) {
    this.object = kind === "chat" ? "chat.completion" : "text_completion";
  }

  private chunk(choices: unknown[]): Json {
    const object = this.kind === "chat" ? "chat.completion.chunk" : "text_completion";
    return { id: this.id, object, created: this.created, model: this.model, choices };
  }

  /** Chat only: the opening chunk announcing the assistant role. */
  roleChunk(): Json {
    return this.chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
  }

  tokenChunk(text: string, finishReason: string | null): Json {
    const stop = finishReason === null ? {} : { stop_reason: null };
    if (this.kind === "chat") {
      return this.chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: finishReason, ...stop }]);
    }
    return this.chunk([{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }]);
  }

  usageChunk(usage: Usage): Json {
    return { ...this.chunk([]), usage };
  }

  full(text: string, finishReason: string, usage: Usage): Json {
    const choice =
      this.kind === "chat"
        ? { index: 0, message: { role: "assistant", content: text, tool_calls: [] }, logprobs: null, finish_reason: finishReason, stop_reason: null }
        : { index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null };
    return { id: this.id, object: this.object, created: this.created, model: this.model, choices: [choice], usage };
  }
}

export function sseEvent(payload: unknown): string {
  return `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}
