import express, { type RequestHandler } from 'express';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { BadRequestError } from '../errors/bad-request-error.js';

export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** JSON bodies (objects and arrays only) up to the configured limit; larger is 413. */
export function jsonBody(limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes, strict: true, type: ['application/json', 'application/*+json'] });
}

/** YAML bodies become the same objects a JSON body would; a syntax error is a 400 naming line and column. */
export function yamlBody(limitBytes: number): RequestHandler[] {
  const text = express.text({ limit: limitBytes, type: YAML_TYPES });
  const toObject: RequestHandler = (request, _response, next) => {
    if (!request.is(YAML_TYPES) || typeof request.body !== 'string') {
      next();
      return;
    }
    try {
      request.body = parseYaml(request.body, { maxAliasCount: 100, uniqueKeys: true }) as unknown;
      next();
    } catch (error) {
      const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}, column ${error.linePos[0].col}` : '';
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      next(new BadRequestError(`The request body is not valid YAML${where}: ${reason}`, 'MALFORMED_BODY'));
    }
  };
  return [text, toObject];
}
