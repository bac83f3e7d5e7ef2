/**
 * The YAML body parser's worker thread (src/http/yaml-body-parser.ts): parses YAML request bodies off the
 * API's event loop. Plain JavaScript on purpose, like the engine worker: it needs no TypeScript transform, so
 * it starts the same way under tsx, node and jest.
 *
 * Why a thread: the `yaml` package costs about 6–15 µs per node on these machines, so a 1 MiB body of short
 * keys (80,000 pairs) takes a second or more even when every step is linear. On the thread that serves HTTP that
 * would hold every request of every tenant; here it holds only the YAML bodies queued behind it, and the host
 * ends a parse that passes its deadline (LIMIT_YAML_PARSE_MS) by terminating this thread.
 *
 * Why duplicate keys are checked here and not by `uniqueKeys: true`: the package compares each new key with
 * every earlier key of its mapping (quadratic: 40,000 keys took 17.7 s). A Set per mapping does the same
 * check in linear time, with the same rule (two scalar keys of the same value; other keys never match) and
 * the same message at the same place.
 *
 * Message in:  {id, text, maxAliasCount}
 * Messages out: {id, started: true} as the parse begins (the host's deadline counts from here, so a fresh
 *               thread's start-up is not charged to the body), then {id, ok: true, value} or
 *               {id, ok: false, message, line, col} (a YAML error, positioned when the parser knew where).
 */
import { parentPort } from 'node:worker_threads';
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';

/** Collections and pairs still to visit, kept on an explicit stack (nesting is bounded before the parse, but no recursion is needed). */
function firstDuplicateKey(root) {
  const stack = root ? [root] : [];
  let first;
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          // NaN never equals itself (the package's `===`), so two `.nan` keys were never duplicates.
          if (seen.has(key.value)) {
            const offset = key.range ? key.range[0] : 0;
            if (first === undefined || offset < first) first = offset;
          } else seen.add(key.value);
        }
        if (key && !isScalar(key) && !isAlias(key)) stack.push(key);
        if (pair.value && !isScalar(pair.value) && !isAlias(pair.value)) stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) {
        if (isPair(item)) {
          // a single-pair mapping inside a flow sequence (`[a: 1]`) composes as a pair
          if (item.value && !isScalar(item.value) && !isAlias(item.value)) stack.push(item.value);
        } else if (item && !isScalar(item) && !isAlias(item)) stack.push(item);
      }
    }
  }
  return first;
}

function parseBody(text, maxAliasCount) {
  const lineCounter = new LineCounter();
  // logLevel 'error': warnings (e.g. unknown tags) are not errors here and are not printed by the thread.
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter, logLevel: 'error' });
  const duplicateAt = firstDuplicateKey(doc.contents);
  const syntax = doc.errors[0];
  // The earlier problem in the text wins, as it did when the package reported both in document order.
  if (duplicateAt !== undefined && (syntax === undefined || duplicateAt <= syntax.pos[0])) {
    const { line, col } = lineCounter.linePos(duplicateAt);
    return { ok: false, message: `Map keys must be unique at line ${line}, column ${col}:`, line, col };
  }
  if (syntax) {
    const where = syntax.linePos ? syntax.linePos[0] : lineCounter.linePos(syntax.pos[0]);
    return { ok: false, message: syntax.message.split('\n')[0], line: where.line, col: where.col };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount }) };
  } catch (error) {
    // e.g. "Excessive alias count indicates a resource exhaustion attack": no position
    return { ok: false, message: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

parentPort.on('message', ({ id, text, maxAliasCount }) => {
  parentPort.postMessage({ id, started: true });
  let answer;
  try {
    answer = parseBody(text, maxAliasCount);
  } catch (error) {
    answer = { ok: false, message: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
  try {
    parentPort.postMessage({ id, ...answer });
  } catch (error) {
    // A value the structured clone cannot copy (none that YAML's core schema makes, but a tag could)
    parentPort.postMessage({
      id,
      ok: false,
      message: `the YAML value cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
});
