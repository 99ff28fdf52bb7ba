// What the docs' tests read of a Markdown page as GitHub renders it: its prose and its headings' anchors, shared by
// docs/links.test.ts (links between pages) and deploy/monitoring/rules.test.ts (the alerts' runbook_url).
/** The page without its fenced code blocks, whose lines are neither headings nor prose. */
export const withoutCode = (markdown: string) => markdown.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1 *$/gm, '');

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, text = ''] of withoutCode(markdown).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}
