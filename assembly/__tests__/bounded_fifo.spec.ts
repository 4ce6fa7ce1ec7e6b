// BoundedFifo: first in, first out; a push onto a full list drops the oldest item only.
import { BoundedFifo } from "../util/bounded_fifo";

describe("BoundedFifo", () => {
  it("hands items out in the order they came", () => {
    const q = new BoundedFifo<string>(4);
    q.push("a"); q.push("b"); q.push("c");
    expect(q.length).toBe(3);
    expect(q.front()).toBe("a");
    expect(q.shift()).toBe("a");
    expect(q.shift()).toBe("b");
    expect(q.length).toBe(1);
  });
  it("a push onto a full list drops the oldest and keeps the bound", () => {
    const q = new BoundedFifo<i32>(3);
    for (let i = 1; i <= 5; i++) q.push(i);
    expect(q.length).toBe(3);
    expect(q.shift()).toBe(3);
    expect(q.shift()).toBe(4);
    expect(q.shift()).toBe(5);
    expect(q.length).toBe(0);
  });
  it("clear empties it and it takes items again", () => {
    const q = new BoundedFifo<i32>(2);
    q.push(1); q.push(2);
    q.clear();
    expect(q.length).toBe(0);
    q.push(7);
    expect(q.front()).toBe(7);
  });
});
