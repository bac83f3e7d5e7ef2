/**
 * Φ, the standard normal distribution function, as JavaScript source for the generated model code (it runs in the
 * tenant's isolate, and JavaScript has no `erf`): the probit link of a RegressionModel. Φ(x) = erfc(−x/√2)/2, with
 * erfc from two classical expansions, so no table of fitted constants is needed:
 * - below 2, the series erf(z) = 2/√π · e^(−z²) · Σ 2ⁿ z^(2n+1) / (1·3·…·(2n+1)), whose terms are all positive;
 * - from 2 on, the continued fraction erfc(z) = e^(−z²)/√π / (z + ½/(z + 1/(z + 3/2/(z + …)))), by Lentz's method.
 * Within 3e-14 relative of Python's math.erfc over −12…12 (test/engine/models/pmml-semantics.test.ts).
 */
export const NORMAL_CDF_SOURCE = `(function () {
  const SQRT_PI = Math.sqrt(Math.PI);
  function erfc(z) {
    if (z < 0) return 2 - erfc(-z);
    if (z < 2) {
      let term = z;
      let sum = z;
      for (let n = 1; Math.abs(term) > 1e-17 * sum; n++) {
        term *= (2 * z * z) / (2 * n + 1);
        sum += term;
      }
      return 1 - (2 / SQRT_PI) * Math.exp(-z * z) * sum;
    }
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
  return function normalCdf(x) {
    return x !== x ? x : 0.5 * erfc(-x / Math.SQRT2);
  };
})()`;
