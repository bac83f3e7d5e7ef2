/**
 * A bound on how deep a YAML text nests, found in one pass over the characters before the `yaml`
 * package sees it. That package composes nodes recursively: a body of a few hundred kilobytes of
 * `[[[[…` costs it seconds of CPU before it gives up with a stack overflow. So nesting is bounded
 * here first, without parsing and without recursion.
 *
 * The bound may overestimate, never underestimate, the nesting the YAML parser would build:
 * - flow collections (`[`, `{`) count exactly, except inside comments and the quoted scalars of flow
 *   collections, which hold no structure (a quote opens only where a node starts, as in YAML; in
 *   block context quotes are not followed, so text inside them can only add to the bound);
 * - block collections count by the columns their entries start at: a line's indentation, and on the
 *   line each compact entry (`- - a`, `- key: v`) and each mapping key. Each column of the open
 *   block levels may hold two collections (a mapping and a sequence written at its key's
 *   indentation), so the block bound is twice the number of open columns;
 * - quoted scalars of block context are followed where a node surely starts: after `key: ` or `- ` on
 *   a line, or at the start of a line whose node the line before left open (`key:`, `-`), or that is the
 *   document's first. Elsewhere at a line's start a quote may continue a plain scalar, and is not followed;
 * - the text of block scalars (`|`, `>`) holds no structure and is skipped: every line more indented than
 *   the scalar's parent (a script's `{ k0: 0, … }` is text, not 70 mapping keys). Their header counts the
 *   same way as a quote: where a node surely starts.
 * So the bound is at most twice the real depth plus the flow nesting: the caller compares it with a
 * threshold of twice its real limit, and checks the exact depth on the parsed value afterwards
 * (nesting-depth.ts).
 */

export interface YamlPosition {
  line: number;
  column: number;
}

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;

function isBlank(code: number): boolean {
  return code === SPACE || code === TAB;
}

/** Where the nesting bound of `text` first exceeds `threshold`, or undefined when it never does. */
export function yamlNestingBeyond(text: string, threshold: number): YamlPosition | undefined {
  const length = text.length;
  /** Columns of the open block levels, innermost last. */
  const indents: number[] = [];
  /** The bound of the block collections around the current position. */
  let block = 0;
  /**
   * A block level starting at `column` of the current line is open: the bound grows if it is a new
   * one. Only a line's indentation closes levels (those deeper than it); entries further along a
   * line only open more.
   */
  const open = (column: number, lineStart: boolean): void => {
    if (lineStart) while (indents.length > 0 && indents[indents.length - 1] > column) indents.pop();
    if (indents.length === 0 || indents[indents.length - 1] < column) indents.push(column);
    block = 2 * indents.length;
  };
  /** Open flow collections. */
  let flow = 0;
  /** In a flow collection: whether the next non-blank character starts a node (after `[`, `{`, `,`, `? ` or `: `). */
  let flowNodeStart = false;
  /** An open quoted scalar (it may continue on the next lines). */
  let quote: 0 | 34 | 39 = 0;
  /** In a block scalar: the indentation of its parent; lines indented more (and blank lines) are its text. */
  let blockScalarParent: number | undefined;
  /** Whether the last line of structure ended where a node starts (`key:`, `- `), as a document's start does. */
  let nodeOpen = true;
  let line = 1;
  let position = 0;

  while (position < length) {
    let end = text.indexOf('\n', position);
    if (end < 0) end = length;
    let at = position;
    // A document marker ends any scalar, and a node starts after it.
    if (
      (text.startsWith('---', at) || text.startsWith('...', at)) &&
      (at + 3 >= end || isBlank(text.charCodeAt(at + 3)) || text.charCodeAt(at + 3) === CR)
    ) {
      quote = 0;
      blockScalarParent = undefined;
      nodeOpen = true;
    }

    /** The column of the last block level opened on this line after its indentation (an entry or a key), or -1. */
    let openedAt = -1;
    let lineIndent = 0;
    if (quote === 0 && flow === 0) {
      while (at < end && text.charCodeAt(at) === SPACE) at += 1;
      const first = at < end ? text.charCodeAt(at) : -1;
      lineIndent = at - position;
      if (blockScalarParent !== undefined) {
        // A block scalar's text: blank lines, and lines indented more than its parent.
        if (first === -1 || first === CR || lineIndent > blockScalarParent) {
          position = end + 1;
          line += 1;
          continue;
        }
        blockScalarParent = undefined;
      }
      // Blank and comment lines, directives: no structure.
      if (first === -1 || first === CR || first === 35 /* # */ || (first === 37 /* % */ && at === position)) {
        position = end + 1;
        line += 1;
        continue;
      }
      open(at - position, true);
    }

    // Block context: whether the next non-blank character begins a node, and the column where the current plain text began.
    let nodeStart = flow === 0;
    let plainStart = 0;
    for (; at < end; at += 1) {
      const code = text.charCodeAt(at);
      if (quote !== 0) {
        if (code === 92 /* \ */ && quote === 34) at += 1;
        else if (code === quote) {
          if (quote === 39 && text.charCodeAt(at + 1) === 39)
            at += 1; // '' inside '…'
          else {
            quote = 0;
            nodeStart = false;
          }
        }
        continue;
      }
      if (isBlank(code) || code === CR) continue;
      if (code === 35 /* # */ && (at === position || isBlank(text.charCodeAt(at - 1)))) break; // a comment ends the line
      const next = at + 1 < end ? text.charCodeAt(at + 1) : LF;
      const beforeBlank = isBlank(next) || next === LF || next === CR;
      if (flow > 0) {
        if (code === 91 /* [ */ || code === 123 /* { */) {
          flow += 1;
          flowNodeStart = true;
        } else if (code === 93 /* ] */ || code === 125 /* } */) {
          flow -= 1;
          flowNodeStart = false;
        } else if (code === 44 /* , */ || ((code === 63 /* ? */ || code === 58) /* : */ && beforeBlank)) {
          flowNodeStart = true;
        } else if ((code === 34 || code === 39) && flowNodeStart) {
          // In a flow collection a quote where a node starts always opens a quoted scalar.
          quote = code;
          flowNodeStart = false;
        } else {
          flowNodeStart = false;
        }
      } else if (nodeStart) {
        // Where a node surely starts: after an entry or a key on this line, or at the line's start when the line
        // before left a node open. (Elsewhere at a line's start, a quote or `|` may continue a plain scalar.)
        const surelyNode = openedAt >= 0 || nodeOpen;
        if ((code === 45 /* - */ || code === 63 /* ? */ || code === 58) /* : */ && beforeBlank) {
          open(at - position, false); // a (compact) entry: its collection's entries start at this column
          openedAt = at - position;
        } else if ((code === 34 || code === 39) && surelyNode) {
          quote = code;
          nodeStart = false;
          plainStart = at - position;
        } else if ((code === 124 /* | */ || code === 62) /* > */ && surelyNode) {
          // A block scalar: the rest of the line is its header; its text is skipped (see above).
          blockScalarParent = openedAt >= 0 ? openedAt : lineIndent - 1;
          nodeStart = false;
          break;
        } else if (code === 91 || code === 123) {
          flow = 1;
          flowNodeStart = true;
          nodeStart = false;
          plainStart = at - position;
        } else if (code === 38 /* & */ || code === 33 /* ! */) {
          // An anchor or a tag: a node still starts after it.
          while (at + 1 < end && !isBlank(text.charCodeAt(at + 1))) at += 1;
        } else if (code === 45 && at === position && text.startsWith('---', at)) {
          at += 2; // a document start marker; its node may follow on the line
        } else {
          nodeStart = false;
          plainStart = at - position;
        }
      } else if (code === 58 /* : */ && beforeBlank) {
        // The end of a mapping key: the mapping's entries start where the key did; its value starts a node.
        open(plainStart, false);
        openedAt = plainStart;
        nodeStart = true;
      }
      if (block + flow > threshold) return { line, column: at - position + 1 };
    }
    if (quote === 0 && flow === 0) nodeOpen = nodeStart;
    position = end + 1;
    line += 1;
  }
  return undefined;
}
