/**
 * The error function and the normal distribution, as JavaScript source for the generated model code (it runs in the
 * tenant's isolate, and JavaScript has no `erf`): the probit link of a RegressionModel, and the PMML built-ins `erf`,
 * `stdNormalCDF`, `stdNormalPDF`, `normalCDF` and `normalPDF`. The source is an expression whose value holds the
 * functions (`.erf`, `.cdf`, `.pdf`). erf and erfc come from two classical expansions, so no table of fitted
 * constants is needed:
 * - below 2, the series erf(z) = 2/√π · e^(−z²) · Σ 2ⁿ z^(2n+1) / (1·3·…·(2n+1)), whose terms are all positive;
 * - from 2 on, the continued fraction erfc(z) = e^(−z²)/√π / (z + ½/(z + 1/(z + 3/2/(z + …)))), by Lentz's method.
 * Φ(x) = erfc(−x/√2)/2. Within 3e-14 relative of Python's math.erf, math.erfc over −12…12
 * (test/engine/models/pmml-semantics.test.ts).
 */
export const NORMAL_SOURCE = `(function () {
  const SQRT_PI = Math.sqrt(Math.PI);
  function erfSeries(z) {
    let term = z;
    let sum = z;
    for (let n = 1; Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
      term *= (2 * z * z) / (2 * n + 1);
      sum += term;
    }
    return (2 / SQRT_PI) * Math.exp(-z * z) * sum;
  }
  function erfcFraction(z) {
    let f = z;
    let c = z;
    let d = 0;
    for (let k = 1; k < 500; k++) {
      d = 1 / (z + (k / 2) * d);
      c = z + k / 2 / c;
      const delta = c * d;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) break;
    }
    return Math.exp(-z * z) / SQRT_PI / f;
  }
  function erfc(z) {
    if (z < 0) return 2 - erfc(-z);
    return z < 2 ? 1 - erfSeries(z) : erfcFraction(z);
  }
  function erf(z) {
    if (z !== z) return z;
    if (z < 0) return -erf(-z);
    return z < 2 ? erfSeries(z) : 1 - erfcFraction(z);
  }
  function cdf(x) {
    return x !== x ? x : 0.5 * erfc(-x / Math.SQRT2);
  }
  function pdf(x) {
    return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
  }
  return { erf, cdf, pdf };
})()`;
