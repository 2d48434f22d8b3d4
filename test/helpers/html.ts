/**
 * A strict enough well-formedness check for the pages logtool writes (bench --report): every
 * element closed in order (void elements and SVG's `<x/>` excepted), attributes quoted, the inline
 * JSON data block parseable. Returns the problems found, none for a well-formed page.
 */
const VOID = new Set(['meta', 'link', 'br', 'hr', 'img', 'input']);

export function htmlProblems(html: string): string[] {
  const problems: string[] = [];
  if (!html.startsWith('<!DOCTYPE html>')) problems.push('no <!DOCTYPE html> first');
  // Raw-text elements: their content is not markup.
  const text = html.replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/g, '<$1></$1>');
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+(?:="[^"]*")?)*)\s*(\/?)>|<!DOCTYPE html>|<|>/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    if (m[0] === '<!DOCTYPE html>') continue;
    if (m[0] === '<' || m[0] === '>') {
      problems.push(`stray "${m[0]}" at ${m.index}: ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 40))}`);
      continue;
    }
    const [, closing, name, , selfClosing] = m;
    const n = name!.toLowerCase();
    if (closing) {
      const open = stack.pop();
      if (open !== n) problems.push(`</${n}> at ${m.index} closes <${open ?? 'nothing'}>`);
    } else if (!selfClosing && !VOID.has(n)) stack.push(n);
  }
  if (stack.length) problems.push(`unclosed: ${stack.join(' > ')}`);
  return problems;
}

/** The JSON of `<script type="application/json" id="…">`. */
export function inlineJson(html: string, id: string): unknown {
  const m = new RegExp(`<script type="application/json" id="${id}">([\\s\\S]*?)</script>`).exec(html);
  return m ? JSON.parse(m[1]!) : undefined;
}
