// libvirt's XML, read and written with fast-xml-parser: entities decoded and escaped by the library (names and paths
// may hold & < > " '), never by patterns. Read, every element is a list (an element may repeat: disks, entries) and
// every attribute a string; nothing is parsed as a number.
import { XMLBuilder, XMLParser } from 'fast-xml-parser';

/** An element: its attributes as `@_name`, its text as `#text`, its children by name. A bare string is text only. */
export type XmlElement = string | { [key: string]: XmlElement[] | string };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // Numeric character references (`&#38;`) as well as the five named entities.
  htmlEntities: true,
  isArray: (_name, _path, _leaf, isAttribute) => !isAttribute,
});

/** The document's root elements; fast-xml-parser refuses only text it cannot read as XML at all. */
export const parseXml = (xml: string): XmlElement => parser.parse(xml) as XmlElement;

/** The children named `name`. */
export const children = (element: XmlElement | undefined, name: string): XmlElement[] =>
  typeof element === 'object' && Array.isArray(element[name]) ? element[name] : [];

/** The first element down `path` (`child(doc, 'domain', 'devices')`). */
export const child = (element: XmlElement | undefined, ...path: string[]): XmlElement | undefined =>
  path.reduce<XmlElement | undefined>((at, name) => children(at, name)[0], element);

export const attribute = (element: XmlElement | undefined, name: string): string | undefined => {
  const value = typeof element === 'object' ? element[`@_${name}`] : undefined;
  return typeof value === 'string' ? value : undefined;
};

/** The element's text (`''` for none); undefined when there is no element. */
export const text = (element: XmlElement | undefined): string | undefined => {
  if (element === undefined || typeof element === 'string') return element;
  const value = element['#text'];
  return typeof value === 'string' ? value : '';
};

/** The names of an element's children (prefixed ones as written, e.g. `steward:vm`). */
export const childNames = (element: XmlElement | undefined): string[] =>
  typeof element === 'object' ? Object.keys(element).filter((k) => !k.startsWith('@_') && k !== '#text') : [];

/** What `buildXml` writes: attributes as `@_name`, text as `#text`, a child or a list of them by name; `{}` is empty. */
export interface XmlTree {
  [key: string]: string | number | XmlTree | XmlTree[] | undefined;
}

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  format: true,
  suppressEmptyNode: true,
  processEntities: true,
});

export const buildXml = (tree: XmlTree): string => builder.build(tree);
