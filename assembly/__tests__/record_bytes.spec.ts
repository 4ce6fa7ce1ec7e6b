// The bytes of a sibling record (policy/predicted_latency/record_bytes.ts): what the writer writes
// the cursor reads back (numbers, non-ASCII text, a record larger than the writer's first buffer),
// and what a reader must refuse (a negative number, a non-number) does not parse as one.
import { Cursor, RecordWriter } from "../policy/predicted_latency/record_bytes";
import { parseRecord } from "../policy/predicted_latency/sibling_streams";
import { SiblingStream } from "../policy/predicted_latency/open_streams";

function cursorOf(w: RecordWriter): Cursor { return new Cursor(Uint8Array.wrap(w.bytes())); }

describe("record bytes", () => {
  it("writes fields and lines the cursor reads back", () => {
    const w = new RecordWriter();
    w.text("tag");
    w.num(1700000000123.4);
    w.num(Infinity); // not finite: 0
    w.line();
    w.text("hôte:8000", 126);
    w.num(7);
    expect(String.UTF8.decode(w.bytes())).toBe("tag 1700000000123 0\n~hôte:8000 7");
    const c = cursorOf(w);
    expect(c.text()).toBe("tag");
    expect(c.num()).toBe(1700000000123);
    expect(c.num()).toBe(0);
    expect(c.atLineEnd).toBe(true);
    expect(c.nextLine()).toBe(true);
    expect(c.peek()).toBe(126);
    c.pos++;
    expect(c.host()).toBe("hôte:8000");
    expect(c.num()).toBe(7);
    expect(c.nextLine()).toBe(false);
  });

  it("writes a negative number with its sign, which the cursor refuses; a reset starts a new record", () => {
    const w = new RecordWriter();
    w.num(-5);
    w.text("x1");
    expect(String.UTF8.decode(w.bytes())).toBe("-5 x1");
    const c = cursorOf(w);
    expect(c.num()).toBe(-1);
    expect(c.num()).toBe(-1); // "x1" is no number either
    w.reset();
    w.num(3);
    expect(String.UTF8.decode(w.bytes())).toBe("3");
  });

  it("grows past its first buffer, and a long record parses back whole", () => {
    const w = new RecordWriter();
    w.text("b");
    w.num(1000);
    for (let i = 0; i < 300; i++) {
      w.line();
      w.text(i % 2 == 0 ? "10.0.0.1:8000" : "10.0.0.2:8000");
      for (let j = 0; j < 7; j++) w.num(<f64>(i + 1));
    }
    expect(w.bytes().byteLength).toBeGreaterThan(4096);
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(w.bytes(), "a", 1000, into)).toBe(1000);
    expect(into.get("10.0.0.1:8000").length).toBe(150);
    expect(into.get("10.0.0.2:8000").length).toBe(150);
    expect(into.get("10.0.0.2:8000")[149].pickedMs).toBe(701); // age 299 at 1000
  });

  it("puts each line on its own host when hosts and kinds alternate", () => {
    const text = "b 1000\nA 1 2 3 4 5 6 7\n~B 1 2\nB 8 2 3 4 5 6 7\nA 9 2 3 4 5 6 7\n^A 5\nA 10 2 3 4 5 6 7";
    const into = new Map<string, SiblingStream[]>();
    const ends = new Map<string, f64[]>();
    expect(parseRecord(String.UTF8.encode(text), "a", 1000, into, ends)).toBe(1000);
    expect(into.get("A").length).toBe(3);
    expect(into.get("A")[2].pickedMs).toBe(991);
    expect(into.get("B").length).toBe(1);
    expect(into.get("B")[0].pickedMs).toBe(993);
    expect(ends.get("B")).toStrictEqual([1000.0, 999.0]);
  });

  it("parses into the spare objects it is given, and allocates once they run out", () => {
    const spare = [new SiblingStream(0, 0, 0, 0, 0, 0, 0)];
    const reused = spare[0];
    const into = new Map<string, SiblingStream[]>();
    expect(parseRecord(String.UTF8.encode("b 1000\nA 1 2 3 4 5 6 7\nA 8 2 3 4 5 6 7"), "a", 1000, into, null, null, null, null, spare)).toBe(1000);
    expect(spare.length).toBe(0);
    const list = into.get("A");
    expect(list.length).toBe(2);
    expect(list.includes(reused)).toBe(true);
    expect(list[0].pickedMs + list[1].pickedMs).toBe(1993);
  });
});
