// What Envoy does with a header a filter (our plugin) wrote that is not valid HTTP.
// - The Wasm ABI does not check: Context::addHeaderMapValue / replaceHeaderMapValue copy any
//   key and value into the header map (envoy source/extensions/common/wasm/context.cc).
// - Request headers are checked when the upstream codec encodes them: HTTP/1
//   RequestEncoderImpl::encodeHeaders (source/common/http/http1/codec_impl.cc) returns the error
//   of HeaderValidation checkValidRequestHeaders (source/common/http/header_validation.cc): name
//   (the ':' of a pseudo-header aside) made of RFC 9110 tchar, value without NUL/CR/LF or other
//   control characters but HTAB (obs-text allowed). The router's UpstreamCodecFilter::decodeHeaders
//   (source/common/router/upstream_codec_filter.cc) then sets DownstreamProtocolError and sends a
//   local 503 whose body is that message ("invalid header value for: <key>") with details
//   `filter_removed_required_request_headers{<message, spaces as '_'>}`.
// - Response headers: ResponseEncoderImpl::encodeHeaders does not check, Envoy writes the bytes as
//   they are. Node cannot write them, so the gateway resets the downstream stream instead (never a
//   clean response: stricter than Envoy, never kinder).
// Inputs: a header map. Failure behaviour: returns the problem as Envoy words it, never throws.
import type { HeaderMap } from "../abi/header-map.js";

const TCHARS = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// HTAB, visible ASCII, SP, obs-text (0x80-0xff); a JS char above 0xff cannot be one byte either.
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

function nameIsValid(name: string): boolean {
  return TCHARS.test(name.startsWith(":") ? name.slice(1) : name);
}

/** Envoy's message for the first invalid header ("invalid header name: k" / "invalid header
 *  value for: k", the key JSON-escaped), or null when every header is valid. */
export function invalidHeader(headers: HeaderMap): string | null {
  for (const [k, v] of headers.pairs()) {
    const key = JSON.stringify(k).slice(1, -1);
    if (!nameIsValid(k)) return `invalid header name: ${key}`;
    if (BAD_VALUE_CHAR.test(v)) return `invalid header value for: ${key}`;
  }
  return null;
}
