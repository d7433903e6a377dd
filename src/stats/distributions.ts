/**
 * Distribution functions the decision layer needs: the standard normal quantile, Student's t
 * (CDF and quantile), and a seeded pseudo-random generator. Pure; no dependency.
 */

/**
 * Standard normal quantile Φ⁻¹(p), relative error < 1.15e-9.
 * Source: P. J. Acklam, "An algorithm for computing the inverse normal cumulative
 * distribution function" (2003), rational approximation with the published coefficients.
 * @throws RangeError unless 0 < p < 1.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/** ln Γ(x) for x > 0. Source: Numerical Recipes in C, 2nd ed., §6.1 `gammln` (Lanczos). */
export function logGamma(x: number): number {
  // eslint-disable-next-line no-loss-of-precision -- the digits as published; the doubles are the same
  const cof = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.000000000190015;
  for (const c of cof) ser += c / ++y;
  // eslint-disable-next-line no-loss-of-precision -- as above
  return -tmp + Math.log((2.5066282746310005 * ser) / x);
}

/** Continued fraction of the incomplete beta function (Numerical Recipes §6.4 `betacf`, modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-14) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). Source: Numerical Recipes in C, 2nd ed., §6.4 `betai`. */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const bt = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (bt * betaContinuedFraction(a, b, x)) / a : 1 - (bt * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** Student's t CDF with `df` degrees of freedom (df > 0): 1 − ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0. */
export function tCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * Student's t quantile: the t with tCdf(t, df) = p, by bisection on {@link tCdf} to 1e-10
 * (the normal quantile when df > 1e6). Remembered per (p, df), and computed with far fewer
 * {@link tCdf} evaluations than the plain bisection ({@link bisectTQuantile}) yet always the
 * same number, bit for bit (a dry run's power table asks for ~200 quantiles: 14 ms → ~1 ms).
 * @throws RangeError unless 0 < p < 1 and df > 0.
 */
export function tQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`tQuantile: p must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`tQuantile: df must be positive, got ${df}`);
  if (df > 1e6) return normalQuantile(p);
  if (p < 0.5) return -tQuantile(1 - p, df);
  // String(x) of a double is exact: distinct arguments never share a key.
  const key = `${p} ${df}`;
  let t = tQuantiles.get(key);
  if (t === undefined) {
    if (tQuantiles.size >= MAX_REMEMBERED_QUANTILES) tQuantiles.clear();
    t = bisectTQuantile(p, df, tBracket(p, df));
    tQuantiles.set(key, t);
  }
  return t;
}

/** Quantiles computed so far, by `${p} ${df}`; bounded (cleared when full). */
const tQuantiles = new Map<string, number>();
const MAX_REMEMBERED_QUANTILES = 10_000;

/** How far, at least, {@link tCdf} at a bracket end must be from p for its side to be taken as known. */
const BRACKET_MARGIN = 1e-12;

/**
 * The bisection of {@link tQuantile} for p ≥ ½: hi doubles from 1 until tCdf(hi) ≥ p, then
 * [0, hi] is halved (at most 200 times) until narrower than 1e-10; the result is its middle.
 * `bracket` saves evaluations without changing one decision: a point at or below
 * `bracket.below` (where tCdf was found below p by more than {@link BRACKET_MARGIN}) is below
 * the quantile, one at or above `bracket.above` (tCdf above p by that margin) is not, as
 * tCdf increases with t and its rounding noise (~1e-14) is far smaller than the margin; only
 * points between them are evaluated. With no bracket (±Infinity) it is the plain bisection.
 */
export function bisectTQuantile(p: number, df: number, bracket: { below: number; above: number } = { below: -Infinity, above: Infinity }): number {
  const { below, above } = bracket;
  const lessThanP = (t: number) => (t <= below ? true : t >= above ? false : tCdf(t, df) < p);
  let lo = 0;
  let hi = 1;
  while (lessThanP(hi)) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-10; i++) {
    const mid = (lo + hi) / 2;
    if (lessThanP(mid)) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Student's t density at `t` with `df` degrees of freedom. */
function tDensity(t: number, df: number): number {
  return Math.exp(logGamma((df + 1) / 2) - logGamma(df / 2) - 0.5 * Math.log(df * Math.PI) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * Two points close around the t quantile (p ≥ ½), each checked with {@link tCdf}: `below`
 * with tCdf < p − margin, `above` with tCdf > p + margin (±Infinity when the check fails, e.g.
 * so far in the tail that the density is too small for the margin). The estimate: the exact
 * quantile for df 1 and 2, else the Cornish–Fisher expansion around the normal quantile
 * (Abramowitz & Stegun 26.7.5), refined by Newton steps on tCdf with the t density.
 */
function tBracket(p: number, df: number): { below: number; above: number } {
  const none = { below: -Infinity, above: Infinity };
  let t: number;
  if (df === 1) t = Math.tan(Math.PI * (p - 0.5));
  else if (df === 2) t = (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  else {
    const z = normalQuantile(p);
    const z2 = z * z;
    const g1 = (z * (z2 + 1)) / 4;
    const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
    const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
    const g4 = (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
    t = z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
    for (let i = 0; i < 6; i++) {
      const next = t - (tCdf(t, df) - p) / tDensity(t, df);
      if (!Number.isFinite(next) || next <= 0) return none;
      const step = Math.abs(next - t);
      t = next;
      // Newton's error squares at each step: after a step this small `t` is off by ~1e-14.
      if (step < 1e-7 * Math.max(1, t)) break;
    }
  }
  if (!Number.isFinite(t) || t <= 0) return none;
  // Wide enough that tCdf at each end is ~16 margins from p: then the ends hold, and only the
  // last few bisection points fall between them.
  const delta = Math.min((16 * BRACKET_MARGIN) / tDensity(t, df), 1e-6 * Math.max(1, t));
  const below = t - delta;
  const above = t + delta;
  return { below: tCdf(below, df) < p - BRACKET_MARGIN ? below : -Infinity, above: tCdf(above, df) > p + BRACKET_MARGIN ? above : Infinity };
}

/**
 * A seeded pseudo-random generator returning floats in [0, 1): mulberry32 (T. Ettinger,
 * public domain), 32-bit state. The same seed gives the same sequence on every machine,
 * which is what makes a Monte Carlo p-value reproducible.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
