// Exact numbers for the filter oracle: the databases compute OData arithmetic in `numeric`, so
// 2147483647 add 1 is 2147483648 and 41 div 2.0 is 20.5; JavaScript doubles would round both.

/** n/d in lowest terms, d > 0. Integers have d = 1. */
export interface Rational {
  readonly n: bigint;
  readonly d: bigint;
}

const abs = (x: bigint) => (x < 0n ? -x : x);
const gcd = (a: bigint, b: bigint): bigint => {
  let [x, y] = [abs(a), abs(b)];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
};

export function rational(n: bigint, d = 1n): Rational {
  if (d === 0n) throw new RangeError("zero denominator");
  const sign = d < 0n ? -1n : 1n;
  const g = gcd(n, d) || 1n;
  return { n: (sign * n) / g, d: (sign * d) / g };
}

/** A literal as written in a URL (`-12`, `2.50`): exact, whatever a double would make of it. */
export function parseDecimal(text: string): Rational {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal literal: ${text}`);
  const [, sign, whole, fraction = ""] = match;
  const n = BigInt(`${whole}${fraction}`) * (sign ? -1n : 1n);
  return rational(n, 10n ** BigInt(fraction.length));
}

export const add = (a: Rational, b: Rational) => rational(a.n * b.d + b.n * a.d, a.d * b.d);
export const sub = (a: Rational, b: Rational) => rational(a.n * b.d - b.n * a.d, a.d * b.d);
export const mul = (a: Rational, b: Rational) => rational(a.n * b.n, a.d * b.d);
export const isZero = (a: Rational) => a.n === 0n;

/** Exact quotient; the caller checks for zero (a division by zero is the request's error). */
export const quotient = (a: Rational, b: Rational) => rational(a.n * b.d, a.d * b.n);

/** Truncated toward zero, as integer division and PostgreSQL's trunc() do. */
export const trunc = (a: Rational) => rational(a.n / a.d);

export function floor(a: Rational): Rational {
  const t = a.n / a.d;
  return rational(a.n < 0n && t * a.d !== a.n ? t - 1n : t);
}

export const ceiling = (a: Rational) => rational(-floor(rational(-a.n, a.d)).n);

/** Half away from zero, as PostgreSQL's round(numeric). */
export function round(a: Rational): Rational {
  const twice = rational(abs(a.n) * 2n + a.d, 2n * a.d);
  const magnitude = floor(twice);
  return a.n < 0n ? rational(-magnitude.n) : magnitude;
}

/** The remainder with the sign of the dividend (JavaScript's %, PostgreSQL's mod). */
export const remainder = (a: Rational, b: Rational) => sub(a, mul(b, trunc(quotient(a, b))));

export const compare = (a: Rational, b: Rational): number => {
  const difference = a.n * b.d - b.n * a.d;
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
};

export const isInteger = (a: Rational) => a.d === 1n;

export const fromInt = (value: number | bigint) => rational(BigInt(value));

/** The integer value, for positions and lengths (callers only pass integral values). */
export const toBigInt = (a: Rational) => a.n / a.d;
