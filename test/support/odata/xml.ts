import { expect } from "vitest";

// A small XML reader, enough for the generated CSDL: elements and attributes, well-formed or an error.

export interface XmlElement {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly children: XmlElement[];
}

const decodeXml = (text: string) =>
  text
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

/** Parses elements and attributes; throws on unbalanced tags or stray text, so the document must be well-formed. */
export function parseXml(document: string): XmlElement {
  const root: XmlElement = { name: "#document", attributes: {}, children: [] };
  const stack: XmlElement[] = [root];
  const token = /<\?[^>]*\?>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let at = 0;
  for (;;) {
    token.lastIndex = at;
    match = token.exec(document);
    if (!match) break;
    at = token.lastIndex;
    const [whole, closing, name, attributeText, selfClosing, text] = match;
    if (whole.startsWith("<?")) continue;
    if (text !== undefined) {
      // Text only inside a path expression (a capability annotation's property list).
      const inPath = stack[stack.length - 1]?.name === "PropertyPath";
      if (text.trim() !== "" && !inPath)
        throw new Error(`unexpected text ${JSON.stringify(text.slice(0, 40))}`);
      continue;
    }
    const top = stack[stack.length - 1] as XmlElement;
    if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of (attributeText ?? "").matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) {
      if (key === undefined || value === undefined) continue;
      if (Object.hasOwn(attributes, key)) throw new Error(`duplicate attribute ${key} on <${name}>`);
      attributes[key] = decodeXml(value);
    }
    const element: XmlElement = { name: name as string, attributes, children: [] };
    top.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (at !== document.length) throw new Error(`cannot read the XML at character ${at}`);
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]?.name}> is not closed`);
  return root;
}

export const childrenNamed = (element: XmlElement, name: string) =>
  element.children.filter((c) => c.name === name);
export function only(elements: XmlElement[], what: string): XmlElement {
  expect(elements, what).toHaveLength(1);
  return elements[0] as XmlElement;
}
export function descendants(element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((child) => [
    ...(child.name === name ? [child] : []),
    ...descendants(child, name),
  ]);
}
