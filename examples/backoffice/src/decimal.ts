// Money arrives as exact decimal strings ("1234.5"): sums and ratios are
// computed on integers scaled by the longest fraction, never through a float.

interface Scaled {
  units: bigint;
  scale: number; // digits after the point
}

function parse(decimal: string): Scaled {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimal.trim());
  if (!m) throw new Error(`not a decimal: ${JSON.stringify(decimal)}`);
  const fraction = m[3] ?? "";
  const units = BigInt(m[2] + fraction);
  return { units: m[1] ? -units : units, scale: fraction.length };
}

function rescale(d: Scaled, scale: number): bigint {
  return d.units * 10n ** BigInt(scale - d.scale);
}

function render(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

// sum adds decimal strings exactly: sum(["0.1", "0.2"]) is "0.3".
export function sum(decimals: readonly string[]): string {
  const parsed = decimals.map(parse);
  const scale = Math.max(0, ...parsed.map((d) => d.scale));
  return render(parsed.reduce((acc, d) => acc + rescale(d, scale), 0n), scale);
}

// share is part / whole between 0 and 1, to a thousandth, for drawing: 0
// when whole is not positive.
export function share(part: string, whole: string): number {
  const [p, w] = [parse(part), parse(whole)];
  const scale = Math.max(p.scale, w.scale);
  const [pu, wu] = [rescale(p, scale), rescale(w, scale)];
  if (wu <= 0n || pu <= 0n) return 0;
  return Number((pu * 1000n) / wu) / 1000;
}

// compare orders decimal strings by value: negative when a < b.
export function compare(a: string, b: string): number {
  const [x, y] = [parse(a), parse(b)];
  const scale = Math.max(x.scale, y.scale);
  const d = rescale(x, scale) - rescale(y, scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
