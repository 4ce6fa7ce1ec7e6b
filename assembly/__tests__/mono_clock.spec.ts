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

  it("knows how far ahead of the wall clock it runs, and moves forward (never back) to another clock's offset", () => {
    const old = new MonoClock();
    old.read(1000);
    old.read(-3599000); // an hour back: this VM runs an hour ahead from now on
    expect(old.offset()).toBe(3600000);
    const recovered = new MonoClock(); // a VM started after the step reads the wall clock
    expect(recovered.read(-3598000)).toBe(-3598000);
    expect(recovered.offset()).toBe(0);
    recovered.adoptOffset(old.offset());
    expect(recovered.read(-3597000)).toBe(old.read(-3597000)); // one clock again
    recovered.adoptOffset(10); // behind it: ignored
    recovered.adoptOffset(NaN);
    expect(recovered.read(-3596000)).toBe(old.read(-3596000));
  });
});
