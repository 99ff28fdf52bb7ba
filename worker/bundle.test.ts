import { bundleWorkflows } from './bundle';

/** The source map inlined at the bundle's end, as the SDK reads it. */
function inlineSourceMap(code: string): { sources: string[]; sourcesContent?: unknown; mappings: string } {
  const base64 = code.slice(code.lastIndexOf('//# sourceMappingURL=data:')).split('base64,')[1] ?? '';
  return JSON.parse(Buffer.from(base64.trimEnd(), 'base64').toString()) as ReturnType<typeof inlineSourceMap>;
}

describe("the workflow bundle's source map, which every workflow thread holds", () => {
  let map: ReturnType<typeof inlineSourceMap>;
  beforeAll(async () => {
    map = inlineSourceMap((await bundleWorkflows()).code);
  }, 60_000);

  it('maps to the TypeScript files and carries none of their text', () => {
    expect(map.sources).toContainEqual(expect.stringMatching(/\/workflows\/object-lifecycle\.ts$/));
    expect(map.sourcesContent).toBeUndefined();
  });

  it('maps each line of the bundle once, not each column', () => {
    const lines = map.mappings.split(';');
    expect(lines.filter((segments) => segments.includes(','))).toEqual([]);
    expect(lines.filter(Boolean).length).toBeGreaterThan(1_000);
  });
});
