import express, { type RequestHandler } from 'express';
import { BadRequestError } from '../errors/bad-request-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { pathBeyondDepth } from '../engine/index.js';
import { nestingTooDeep } from './nesting-depth.js';
import type { YamlBodyParser } from './yaml-body-parser.js';
import { yamlNestingBeyond } from './yaml-nesting.js';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/**
 * YAML bodies become the same objects a JSON body would; a syntax error or a duplicate key is a 400 naming
 * line and column. The text's nesting is bounded before the parser sees it (yaml-nesting.ts: the parser
 * recurses, and spends seconds on a deep body before it overflows; the bound is one linear pass of a few ms
 * per MiB). The parse itself runs on the YAML parser's thread (yaml-body-parser.ts), never on the event loop,
 * with a deadline: past it (or past its memory) the body is 413 BODY_TOO_COMPLEX. Aliases are bounded
 * (an anchor's uses times the aliases inside it), so expansion stays small.
 */
export function yamlBody(limitBytes: number, maxDepth: number, parser: YamlBodyParser): RequestHandler[] {
  const text = express.text({ limit: limitBytes, type: YAML_TYPES });
  const toObject: RequestHandler = (request, _response, next) => {
    if (!request.is(YAML_TYPES) || typeof request.body !== 'string') {
      next();
      return;
    }
    // The bound may overestimate block nesting up to twice over: the exact check runs on the parsed value.
    const tooDeep = yamlNestingBeyond(request.body, 2 * maxDepth + 2);
    if (tooDeep) {
      next(nestingTooDeep(`body at line ${tooDeep.line}, column ${tooDeep.column}`, maxDepth));
      return;
    }
    parser.parse(request.body).then((outcome) => {
      if (outcome.ok && (outcome.value === null || typeof outcome.value !== 'object')) {
        next(notACollection(outcome.value));
      } else if (outcome.ok) {
        request.body = outcome.value;
        yamlBodies.add(request);
        // The value was copied in from the parser's thread in this task (tens of ms for 40,000 keys): the walks
        // and validations that follow run in a task of their own, so the event loop is never held for the sum.
        setImmediate(next);
      } else if ('tooComplex' in outcome) {
        next(new PayloadTooLargeError(`${outcome.message}; send it as JSON, or split it`, 'BODY_TOO_COMPLEX'));
      } else {
        const where = outcome.line === undefined ? '' : ` at line ${outcome.line}, column ${outcome.col}`;
        next(new BadRequestError(`The request body is not valid YAML${where}: ${outcome.message}`, 'MALFORMED_BODY'));
      }
    }, next);
  };
  return [text, toObject];
}

/**
 * A YAML body that parsed to a scalar: every YAML operation takes a mapping or a list (as a JSON body must be an
 * object or an array). A string is often the YAML text JSON-encoded by a client that serialises every body as JSON.
 */
function notACollection(value: unknown): BadRequestError {
  const kind = value === null ? 'empty (null)' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;
  const hint =
    typeof value === 'string' && /:\s/.test(value)
      ? ' (a client that JSON-encodes every body sends YAML text so: send the text itself as application/yaml, or the document as application/json)'
      : '';
  const problem = { path: 'body', message: `must be a mapping or a list; it is ${kind}${hint}` };
  return new BadRequestError(`The YAML body ${problem.message}.`, 'VALIDATION_FAILED', [problem]);
}

/**
 * After the parsers: a body nested deeper than `maxDepth` levels (the body is level 1) is 400
 * NESTING_TOO_DEEP naming where, before validation and handlers walk it recursively.
 */
export function bodyDepthLimit(maxDepth: number): RequestHandler {
  return (request, _response, next) => {
    const path = pathBeyondDepth(request.body, maxDepth);
    if (path !== undefined) next(nestingTooDeep(path, maxDepth));
    // A YAML body may be large in nodes (its parse is off the event loop): the validation that follows gets a task of its own.
    else if (yamlBodies.has(request)) setImmediate(next);
    else next();
  };
}

/** Requests whose body came from the YAML parser (a hop to the next task between the steps that walk it). */
const yamlBodies = new WeakSet<object>();
