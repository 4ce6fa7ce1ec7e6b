// The plugin's clock (host/mono_clock.ts): the wall clock's forward steps, never its backward ones.
import { MonoClock } from "../host/mono_clock";

describe("MonoClock", () => {
  it("is the wall clock until it goes back; then it goes on from where it was", () => {
    const c = new MonoClock();
    expect(c.read(1000)).toBe(1000);
    expect(c.read(1500)).toBe(1500);
    expect(c.read(-3598500)).toBe(1500); // an hour back: time stands still for that reading
    expect(c.read(-3598400)).toBe(1600); // then moves on with the wall clock's steps
    expect(c.read(-3598400)).toBe(1600);
    expect(c.read(NaN)).toBe(1600);
    expect(c.read(-3590000)).toBe(10000);
  });
});
