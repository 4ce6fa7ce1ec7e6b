// Incremental parser of a `text/event-stream` body: feed it chunks as they arrive (an event may be
// split anywhere, even inside a UTF-8 sequence or between \r and \n), get back the complete
// events' `data` payloads (multi-line data joined with \n). Never throws; comments and other
// fields are ignored.
import { StringDecoder } from "node:string_decoder";

export class SseParser {
  private readonly decoder = new StringDecoder("utf8");
  private buffer = "";
  private dataLines: string[] = [];

  /** Returns the data of every event completed by this chunk. */
  push(chunk: Buffer | string): string[] {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    const events: string[] = [];
    let newline: number;
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      let line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (this.dataLines.length > 0) events.push(this.dataLines.join("\n"));
        this.dataLines = [];
      } else if (line.startsWith("data:")) {
        this.dataLines.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
    return events;
  }
}
