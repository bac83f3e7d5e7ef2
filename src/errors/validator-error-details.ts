/** One problem of a request check (src/http/request-check.ts): a JSON-pointer-like path, Ajv's message and `<keyword>.openapi.validation`. */
export interface ValidatorErrorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

const keywordOf = (item: ValidatorErrorItem): string | undefined =>
  item.errorCode?.replace(/\.openapi\.validation$/, '');
const isUnder = (path: string | undefined, parent: string): boolean => !!path && path.startsWith(`${parent}/`);

/**
 * Ajv reports a failed `oneOf`/`anyOf` as the errors of every branch plus "must match exactly one schema
 * in oneOf", so a body that is one scenario with a bad test case was also told "body must be array" (the
 * other branch). This keeps what names the real problem:
 * - when some error lies deeper than the failed oneOf, the value had the shape of that branch: the other
 *   branches' type mismatches at the oneOf itself and the summary are dropped;
 * - when nothing lies deeper, the value fits no branch's type: the mismatches become one
 *   "must be array or object".
 */
export function explainValidatorErrors(items: ValidatorErrorItem[]): ValidatorErrorItem[] {
  const alternatives = items.filter((item) => keywordOf(item) === 'oneOf' || keywordOf(item) === 'anyOf');
  if (alternatives.length === 0) return items;
  const dropped = new Set<ValidatorErrorItem>();
  const merged = new Map<ValidatorErrorItem, ValidatorErrorItem>();
  for (const alternative of alternatives) {
    const at = alternative.path ?? '';
    const typeErrors = items.filter((item) => item.path === alternative.path && keywordOf(item) === 'type');
    if (items.some((item) => isUnder(item.path, at))) {
      dropped.add(alternative);
      typeErrors.forEach((item) => {
        dropped.add(item);
      });
    } else if (typeErrors.length > 0) {
      const types = [...new Set(typeErrors.map((item) => item.message?.replace(/^must be /, '') ?? ''))];
      dropped.add(alternative);
      typeErrors.slice(1).forEach((item) => {
        dropped.add(item);
      });
      merged.set(typeErrors[0], { ...typeErrors[0], message: `must be ${types.join(' or ')}` });
    }
  }
  return items.filter((item) => !dropped.has(item)).map((item) => merged.get(item) ?? item);
}
